//! Pages of a stored layer's features read by PostgreSQL itself in persistent mode: the bbox
//! goes through the GiST index (`&&`) before the exact test, so a page of a large table costs
//! an index scan, not a copy of the table.

use geomill_planner::sql::quote::ident;

use super::PostgresStore;
use crate::BackendError;
use crate::postgis::query_error;
use crate::store::{FeaturePage, LayerRecord, PG_LAYER_SCHEMA};

/// The layer's `geom` in WGS 84 longitude/latitude, in PostGIS SQL.
fn lon_lat(srid: Option<u32>) -> String {
    match srid {
        None | Some(4326) => "geom".to_owned(),
        Some(_) => "ST_Transform(geom, 4326)".to_owned(),
    }
}

/// `WHERE` clause keeping the rows whose geometry meets a lon/lat box (none without a box; a box
/// crossing the antimeridian is two).
fn bbox_filter(srid: Option<u32>, bbox: Option<[f64; 4]>) -> String {
    let Some(bbox) = bbox else {
        return String::new();
    };
    let parts: Vec<String> = crate::bbox::bbox_parts(bbox)
        .into_iter()
        .map(|part| box_condition(srid, part))
        .collect();
    format!(" WHERE ({})", parts.join(" OR "))
}

fn box_condition(srid: Option<u32>, [a, b, c, d]: [f64; 4]) -> String {
    let envelope = format!("ST_MakeEnvelope({a:?}, {b:?}, {c:?}, {d:?}, 4326)");
    // The box in the layer's own SRID first, so the index on `geom` is used.
    let in_layer = match srid {
        None => format!("ST_SetSRID({envelope}, ST_SRID(geom))"),
        Some(4326) => envelope.clone(),
        Some(code) => format!("ST_Transform({envelope}, {code})"),
    };
    format!(
        "(geom && {in_layer} AND ST_Intersects({}, {envelope_for_test}))",
        lon_lat(srid),
        envelope_for_test = if srid.is_none() {
            format!("ST_SetSRID({envelope}, ST_SRID(geom))")
        } else {
            envelope
        }
    )
}

impl PostgresStore {
    /// A page of a stored layer's features (persistent mode) as GeoJSON in WGS 84 lon/lat,
    /// optionally only those meeting a lon/lat `bbox`, ordered by `fid` (their ids).
    pub async fn stored_features(
        &self,
        layer: &LayerRecord,
        bbox: Option<[f64; 4]>,
        (limit, offset): (i64, i64),
    ) -> Result<FeaturePage, BackendError> {
        let srid = layer.epsg_code();
        let table = format!("{PG_LAYER_SCHEMA}.{}", ident(&layer.table_name));
        let filter = bbox_filter(srid, bbox);
        let client = self.postgis.client().await?;
        let count = format!("SELECT count(*) FROM {table} AS t{filter}");
        let total: i64 = client
            .query_one(&count, &[])
            .await
            .map_err(query_error(&count))?
            .get(0);
        let page = format!(
            "SELECT json_build_object('type', 'Feature', 'id', fid, \
             'geometry', ST_AsGeoJSON({geometry})::json, \
             'properties', to_jsonb(t) - 'geom' - 'fid')::text \
             FROM {table} AS t{filter} ORDER BY fid LIMIT $1 OFFSET $2",
            geometry = lon_lat(srid),
        );
        let rows = client
            .query(&page, &[&limit, &offset])
            .await
            .map_err(query_error(&page))?;
        Ok(FeaturePage {
            total,
            features: rows.iter().map(|row| row.get::<_, String>(0)).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_box_meets_the_index_in_the_layer_srid() {
        let filter = bbox_filter(Some(2263), Some([-74.0, 40.6, -73.9, 40.8]));
        assert!(
            filter.contains("geom && ST_Transform(ST_MakeEnvelope"),
            "{filter}"
        );
        assert!(
            filter.contains("ST_Intersects(ST_Transform(geom, 4326)"),
            "{filter}"
        );
        assert_eq!(bbox_filter(Some(4326), None), "");
        assert!(
            bbox_filter(Some(4326), Some([0.0, 0.0, 1.0, 1.0])).contains("geom && ST_MakeEnvelope")
        );
    }
}
