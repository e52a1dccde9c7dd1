//! Projects: each a PostgreSQL schema of its own, recorded in `geomill.projects`. Names are
//! checked against a fixed pattern and every identifier is quoted, never pasted.

use geomill_planner::sql::quote::ident;
use tokio_postgres::Row;

use super::PostgresStore;
use crate::BackendError;
use crate::postgis::query_error;
use crate::store::schema::PG_PROJECTS_DDL;

/// A project as the catalog keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRecord {
    pub id: String,
    pub name: String,
    /// The PostgreSQL schema holding the project's layers.
    pub schema: String,
    pub description: Option<String>,
    /// RFC 3339 UTC.
    pub created_at: String,
}

/// A table of a project's schema with a geometry column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectLayer {
    pub name: String,
    pub geometry_type: String,
    pub srid: i32,
    pub feature_count: i64,
}

/// Why a project could not be created.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error("a project named {0:?} exists already")]
    Duplicate(String),
    #[error(transparent)]
    Backend(#[from] BackendError),
}

const COLUMNS: &str = "id, name, schema_name, description, \
     to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')";

fn from_row(row: &Row) -> ProjectRecord {
    ProjectRecord {
        id: row.get(0),
        name: row.get(1),
        schema: row.get(2),
        description: row.get(3),
        created_at: row.get(4),
    }
}

/// Whether `name` may name a project: 1 to 48 lower-case letters, digits and `_`, starting with
/// a letter (it becomes part of a schema name).
pub fn valid_project_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && name.len() <= 48
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

impl PostgresStore {
    async fn project_catalog(&self) -> Result<deadpool_postgres::Object, BackendError> {
        let client = self.postgis.client().await?;
        if !self.catalog_ready.load(std::sync::atomic::Ordering::SeqCst) {
            client
                .batch_execute(PG_PROJECTS_DDL)
                .await
                .map_err(query_error(PG_PROJECTS_DDL))?;
            self.catalog_ready
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
        Ok(client)
    }

    /// Creates project `name` (checked with [`valid_project_name`] by the caller) and its
    /// schema `project_<name>`, in one transaction.
    pub async fn create_project(
        &self,
        id: &str,
        name: &str,
        description: Option<&str>,
    ) -> Result<ProjectRecord, ProjectError> {
        let mut client = self.project_catalog().await?;
        let schema = format!("project_{name}");
        let transaction = client.transaction().await.map_err(query_error("BEGIN"))?;
        let insert = format!(
            "INSERT INTO geomill.projects (id, name, schema_name, description) VALUES ($1, $2, $3, $4) \
             ON CONFLICT DO NOTHING RETURNING {COLUMNS}"
        );
        let inserted = transaction
            .query_opt(&insert, &[&id, &name, &schema, &description])
            .await
            .map_err(query_error(&insert))?;
        let Some(row) = inserted else {
            return Err(ProjectError::Duplicate(name.to_owned()));
        };
        let create = format!("CREATE SCHEMA {}", ident(&schema));
        transaction
            .batch_execute(&create)
            .await
            .map_err(query_error(&create))?;
        transaction.commit().await.map_err(query_error("COMMIT"))?;
        Ok(from_row(&row))
    }

    /// Every project, oldest first.
    pub async fn projects(&self) -> Result<Vec<ProjectRecord>, BackendError> {
        let client = self.project_catalog().await?;
        let sql = format!("SELECT {COLUMNS} FROM geomill.projects ORDER BY created_at, id");
        let rows = client.query(&sql, &[]).await.map_err(query_error(&sql))?;
        Ok(rows.iter().map(from_row).collect())
    }

    /// One project.
    pub async fn project(&self, id: &str) -> Result<Option<ProjectRecord>, BackendError> {
        let client = self.project_catalog().await?;
        let sql = format!("SELECT {COLUMNS} FROM geomill.projects WHERE id = $1");
        let row = client
            .query_opt(&sql, &[&id])
            .await
            .map_err(query_error(&sql))?;
        Ok(row.as_ref().map(from_row))
    }

    /// The tables of `schema` with a geometry column, by name, with their row counts.
    pub async fn project_layers(&self, schema: &str) -> Result<Vec<ProjectLayer>, BackendError> {
        let client = self.postgis.client().await?;
        let sql = "SELECT f_table_name::text, type::text, srid FROM geometry_columns \
                   WHERE f_table_schema = $1 ORDER BY f_table_name";
        let rows = client
            .query(sql, &[&schema])
            .await
            .map_err(query_error(sql))?;
        let mut layers = Vec::new();
        for row in rows {
            let name: String = row.get(0);
            let count = format!("SELECT count(*) FROM {}.{}", ident(schema), ident(&name));
            let counted = client
                .query_one(&count, &[])
                .await
                .map_err(query_error(&count))?;
            layers.push(ProjectLayer {
                name,
                geometry_type: row.get(1),
                srid: row.get(2),
                feature_count: counted.get(0),
            });
        }
        Ok(layers)
    }
}

#[cfg(test)]
mod tests {
    use super::valid_project_name;

    #[test]
    fn project_names_are_plain_identifiers() {
        for good in ["a", "city_planning", "zone2", &"x".repeat(48)] {
            assert!(valid_project_name(good), "{good}");
        }
        for bad in [
            "",
            "2zones",
            "City",
            "a-b",
            "a b",
            "x\"; DROP SCHEMA public; --",
            "é",
            &"x".repeat(49),
        ] {
            assert!(!valid_project_name(bad), "{bad}");
        }
    }
}
