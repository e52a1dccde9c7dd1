//! A run's result file read back: pages of its features as GeoJSON in WGS 84 lon/lat.

use geomill_planner::sql::quote::string;

use super::Store;
use super::features::FeaturePage;
use super::load::crs_of_type;
use crate::BackendError;
use crate::duckdb::file_source;
use crate::duckdb::query_error;

impl Store {
    /// A page of the features of the file at `path` (its first layer), ordered as stored.
    pub fn file_features(
        &self,
        path: &str,
        limit: i64,
        offset: i64,
    ) -> Result<FeaturePage, BackendError> {
        let connection = self
            .connection()?
            .try_clone()
            .map_err(query_error("connect"))?;
        let source = file_source(path);
        let describe = format!("DESCRIBE SELECT * FROM {source}");
        let mut statement = connection
            .prepare(&describe)
            .map_err(query_error(&describe))?;
        let columns: Vec<(String, String)> = statement
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(query_error(&describe))?
            .collect::<Result<_, _>>()
            .map_err(query_error(&describe))?;
        let Some((geometry, data_type)) = columns
            .iter()
            .find(|(_, ty)| ty.starts_with("GEOMETRY"))
            .cloned()
        else {
            return Err(BackendError::Query {
                engine: "duckdb",
                reason: "the result has no geometry column".into(),
                sql: describe,
            });
        };
        let column = geomill_planner::sql::quote::ident(&geometry);
        let lon_lat = match crs_of_type(&data_type).as_deref() {
            Some("EPSG:4326") | None => column.clone(),
            Some(crs) => format!(
                "ST_Transform({column}, {}, 'EPSG:4326', always_xy := true)",
                string(crs)
            ),
        };
        let count = format!("SELECT count(*) FROM {source}");
        let total: i64 = connection
            .query_row(&count, [], |r| r.get(0))
            .map_err(query_error(&count))?;
        let sql = format!(
            "SELECT CAST(json_object('type', 'Feature', 'id', row_number() OVER () + ? - 1, \
             'geometry', CAST(ST_AsGeoJSON({lon_lat}) AS JSON), \
             'properties', to_json(struct_pack(*COLUMNS(* EXCLUDE ({column}))))) AS VARCHAR) \
             FROM (SELECT * FROM {source} LIMIT ? OFFSET ?)"
        );
        let mut statement = connection.prepare(&sql).map_err(query_error(&sql))?;
        let features = statement
            .query_map(duckdb::params![offset, limit, offset], |r| {
                r.get::<_, String>(0)
            })
            .map_err(query_error(&sql))?
            .collect::<Result<_, _>>()
            .map_err(query_error(&sql))?;
        Ok(FeaturePage { total, features })
    }
}
