//! Where the dataset store lives: the catalog tables and the layer tables, either in the
//! embedded DuckDB file (portable mode) or in PostgreSQL + PostGIS attached to DuckDB through
//! its `postgres` extension (persistent mode). Every statement that names a catalog table or a
//! layer table gets the name from here.

use geomill_planner::sql::quote::{ident, string};

/// The alias under which the PostgreSQL store is attached to the embedded DuckDB database.
pub const STORE_ALIAS: &str = "geomill_store";
/// The PostgreSQL schema of the catalog in persistent mode.
pub const PG_CATALOG_SCHEMA: &str = "geomill";
/// The PostgreSQL schema of the layer tables in persistent mode.
pub const PG_LAYER_SCHEMA: &str = "geomill_data";

/// The store's location, fixed when the engine opens.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum StoreLocation {
    /// Catalog in the `meta` schema, layers in the `layers` schema of the DuckDB file.
    #[default]
    Embedded,
    /// Catalog in the PostgreSQL schema `geomill`, layers in `geomill_data` (each with a
    /// `fid` identity key, its SRID and a GiST index on `geom`).
    Postgis { dsn: String },
}

impl StoreLocation {
    /// The PostgreSQL database the embedded engine attaches for this store (persistent mode),
    /// with the catalog's tables created there when missing.
    pub fn attachment(&self) -> Option<crate::duckdb::Attachment> {
        match self {
            Self::Embedded => None,
            Self::Postgis { dsn } => Some(crate::duckdb::Attachment {
                dsn: dsn.clone(),
                alias: STORE_ALIAS.to_owned(),
                setup: super::schema::catalog_ddl(self),
            }),
        }
    }

    /// Whether the store is PostgreSQL.
    pub fn is_postgis(&self) -> bool {
        matches!(self, Self::Postgis { .. })
    }

    /// A catalog table (`datasets`, `layers`, `remote_layers`) as DuckDB names it.
    pub fn catalog(&self, table: &str) -> String {
        match self {
            Self::Embedded => format!("meta.{}", ident(table)),
            Self::Postgis { .. } => format!("{STORE_ALIAS}.{PG_CATALOG_SCHEMA}.{}", ident(table)),
        }
    }

    /// A layer's table as DuckDB names it.
    pub fn layer(&self, table_name: &str) -> String {
        match self {
            Self::Embedded => format!("layers.{}", ident(table_name)),
            Self::Postgis { .. } => {
                format!("{STORE_ALIAS}.{PG_LAYER_SCHEMA}.{}", ident(table_name))
            }
        }
    }

    /// A query giving a layer's attributes and `geom`, without the store's own key column.
    pub fn layer_rows(&self, table_name: &str) -> String {
        match self {
            Self::Embedded => format!("SELECT * FROM {}", self.layer(table_name)),
            Self::Postgis { .. } => {
                format!("SELECT * EXCLUDE (fid) FROM {}", self.layer(table_name))
            }
        }
    }

    /// The expression of a feature's id: DuckDB's row number, or the PostgreSQL identity key.
    pub fn feature_id(&self) -> &'static str {
        match self {
            Self::Embedded => "rowid",
            Self::Postgis { .. } => "fid",
        }
    }

    /// The columns a layer table has that are not the layer's own attributes, for `EXCLUDE`
    /// lists (`geom` is listed by the caller).
    pub fn key_columns(&self) -> &'static str {
        match self {
            Self::Embedded => "",
            Self::Postgis { .. } => ", fid",
        }
    }

    /// A `duckdb_columns()` condition selecting the columns of the layer table `table_name`
    /// (the store's key column left out).
    pub fn layer_columns_filter(&self, table_name: &str) -> String {
        match self {
            Self::Embedded => format!(
                "schema_name = 'layers' AND table_name = {}",
                string(table_name)
            ),
            Self::Postgis { .. } => format!(
                "database_name = '{STORE_ALIAS}' AND schema_name = '{PG_LAYER_SCHEMA}' \
                 AND table_name = {} AND column_name <> 'fid'",
                string(table_name)
            ),
        }
    }

    /// The PostgreSQL table of a layer (`geomill_data.<table>`), for SQL run in PostgreSQL.
    pub fn postgis_table(table_name: &str) -> String {
        format!("{PG_LAYER_SCHEMA}.{}", ident(table_name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_location() {
        let embedded = StoreLocation::Embedded;
        let postgis = StoreLocation::Postgis { dsn: String::new() };
        assert_eq!(embedded.catalog("datasets"), "meta.\"datasets\"");
        assert_eq!(
            postgis.catalog("datasets"),
            "geomill_store.geomill.\"datasets\""
        );
        assert_eq!(embedded.layer("l_a_0"), "layers.\"l_a_0\"");
        assert_eq!(
            postgis.layer("l_a_0"),
            "geomill_store.geomill_data.\"l_a_0\""
        );
        assert!(postgis.layer_rows("x").contains("EXCLUDE (fid)"));
        assert!(crate::store::schema::catalog_ddl(&postgis).contains("geomill.\"datasets\""));
        assert!(!crate::store::schema::catalog_ddl(&postgis).contains(STORE_ALIAS));
    }
}
