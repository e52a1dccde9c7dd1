//! What OGC API Features and vector tiles read from a layer: its extent, one feature by id, and
//! Mapbox Vector Tiles cut in Web Mercator.

use geomill_planner::sql::quote::string;

use super::Store;
use super::features::{OutputCrs, lon_lat_geometry};
use super::records::LayerRecord;
use crate::BackendError;
use crate::duckdb::query_error;

/// Tile extent (MVT units per tile side) and the buffer kept around a tile, in those units.
const EXTENT: u32 = 4096;
const BUFFER: u32 = 256;

/// The latitude Web Mercator's tile matrix ends at (north and south).
pub const MAX_TILE_LATITUDE: f64 = 85.051_128_779_806_6;

/// The WGS 84 bounds `[west, south, east, north]` of Web Mercator tile z/x/y, widened by
/// `margin` tile widths (clipped to the valid range).
pub fn tile_bounds(z: u32, x: u32, y: u32, margin: f64) -> [f64; 4] {
    let n = f64::from(1_u32 << z);
    let lon = |x: f64| x / n * 360.0 - 180.0;
    let lat = |y: f64| {
        (std::f64::consts::PI * (1.0 - 2.0 * y / n))
            .sinh()
            .atan()
            .to_degrees()
    };
    let (x, y) = (f64::from(x), f64::from(y));
    [
        lon(x - margin).max(-180.0),
        lat(y + 1.0 + margin).max(-MAX_TILE_LATITUDE),
        lon(x + 1.0 + margin).min(180.0),
        lat(y - margin).min(MAX_TILE_LATITUDE),
    ]
}

impl Store {
    /// The layer's extent in WGS 84 longitude/latitude; `None` when it has no geometry.
    pub fn layer_extent(&self, layer: &LayerRecord) -> Result<Option<[f64; 4]>, BackendError> {
        let sql = format!(
            "SELECT min(ST_XMin(g)), min(ST_YMin(g)), max(ST_XMax(g)), max(ST_YMax(g)) FROM (SELECT {} AS g FROM {})",
            lon_lat_geometry(layer),
            self.location.layer(&layer.table_name)
        );
        let row: (Option<f64>, Option<f64>, Option<f64>, Option<f64>) = self
            .reader()?
            .query_row(&sql, [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .map_err(query_error(&sql))?;
        Ok(match row {
            (Some(a), Some(b), Some(c), Some(d)) => Some([a, b, c, d]),
            _ => None,
        })
    }

    /// Where a map of the layer should look: `[west, south, east, north]` in lon/lat around the
    /// data, with `east` past 180 when the data sits on both sides of the antimeridian (the
    /// Aleutians, Fiji, Chukotka) and is narrower seen from there; `None` without geometry.
    /// Each part of each geometry counts on its own: a part west of Greenwich may be taken
    /// 360 degrees east.
    pub fn display_extent(&self, layer: &LayerRecord) -> Result<Option<[f64; 4]>, BackendError> {
        let sql = format!(
            "WITH parts AS (SELECT ST_XMin(p) AS x0, ST_YMin(p) AS y0, ST_XMax(p) AS x1, ST_YMax(p) AS y1 \
               FROM (SELECT unnest(ST_Dump(g)).geom AS p FROM (SELECT {} AS g FROM {}) WHERE g IS NOT NULL)) \
             SELECT min(x0), min(y0), max(x1), max(y1), \
               min(CASE WHEN x1 < 0 THEN x0 + 360 ELSE x0 END), max(CASE WHEN x1 < 0 THEN x1 + 360 ELSE x1 END) \
             FROM parts WHERE x0 IS NOT NULL",
            lon_lat_geometry(layer),
            self.location.layer(&layer.table_name)
        );
        type Row = (
            Option<f64>,
            Option<f64>,
            Option<f64>,
            Option<f64>,
            Option<f64>,
            Option<f64>,
        );
        let row: Row = self
            .reader()?
            .query_row(&sql, [], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })
            .map_err(query_error(&sql))?;
        let (
            Some(west),
            Some(south),
            Some(east),
            Some(north),
            Some(west_shifted),
            Some(east_shifted),
        ) = row
        else {
            return Ok(None);
        };
        Ok(Some(if east_shifted - west_shifted < east - west {
            [west_shifted, south, east_shifted, north]
        } else {
            [west, south, east, north]
        }))
    }

    /// One feature by its id (its row number) as GeoJSON text, its geometry in `crs`.
    pub fn feature(
        &self,
        layer: &LayerRecord,
        id: i64,
        crs: OutputCrs,
    ) -> Result<Option<String>, BackendError> {
        let sql = format!(
            "SELECT CAST(json_object('type', 'Feature', 'id', {id}, 'geometry', CAST(ST_AsGeoJSON({}) AS JSON), \
             'properties', to_json(struct_pack(*COLUMNS(* EXCLUDE (geom{keys}))))) AS VARCHAR) \
             FROM {} WHERE {id} = ?",
            crs.geometry(layer),
            self.location.layer(&layer.table_name),
            id = self.location.feature_id(),
            keys = self.location.key_columns(),
        );
        match self.reader()?.query_row(&sql, [id], |r| r.get(0)) {
            Ok(feature) => Ok(Some(feature)),
            Err(duckdb::Error::QueryReturnedNoRows) => Ok(None),
            Err(e) => Err(query_error(&sql)(e)),
        }
    }

    /// `bbox` given in EPSG:`code` (its authority's axis order) as a CRS84 bbox: the extent of
    /// the transformed rectangle.
    pub fn bbox_to_crs84(&self, bbox: [f64; 4], code: u32) -> Result<[f64; 4], BackendError> {
        let [a, b, c, d] = bbox;
        let sql = format!(
            "SELECT ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e) FROM \
             (SELECT ST_Transform(ST_MakeEnvelope({a:?}, {b:?}, {c:?}, {d:?}), 'EPSG:{code}', 'OGC:CRS84') AS e)"
        );
        self.connection()?
            .query_row(&sql, [], |r| {
                Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?])
            })
            .map_err(query_error(&sql))
    }

    /// Tile z/x/y of the layer as a Mapbox Vector Tile (one layer named `name`, every attribute
    /// kept, geometries clipped with a buffer and snapped to the tile grid); empty when no
    /// feature touches the tile.
    pub fn tile(
        &self,
        layer: &LayerRecord,
        name: &str,
        (z, x, y): (u32, u32, u32),
    ) -> Result<Vec<u8>, BackendError> {
        // Clip in lon/lat first (a tile plus its buffer): cheap, and it keeps the poles, which
        // Web Mercator cannot hold, out of the projection.
        let margin = f64::from(BUFFER) / f64::from(EXTENT);
        let [west, south, east, north] = tile_bounds(z, x, y, margin);
        let clip = format!("ST_MakeEnvelope({west:?}, {south:?}, {east:?}, {north:?})");
        // Real layers hold invalid polygons (self-intersections, holes crossing their shell)
        // and GEOS refuses to clip those: a feature whose clip fails is made valid and clipped
        // again (counted as repaired). Clipping leaves collections of mixed dimensions: the
        // highest dimension is kept. GEOS can also fail to rebuild a polygon snapped to the
        // tile grid (a hole left without its shell); such a feature is tried again simplified
        // to the grid and made valid, and one that still fails (or collapses below a pixel at
        // this zoom, as tile servers drop it) is left out and counted in the log.
        // Geometries are first simplified to a quarter of a pixel, in lon/lat, and only
        // features not inside the tile are clipped: at low zooms most of the work is avoided.
        let resolution = 2.0 * 20_037_508.342_789_244 / f64::from(1_u32 << z) / f64::from(EXTENT);
        let pixel_degrees = 360.0 / f64::from(1_u32 << z) / f64::from(EXTENT);
        let tolerance = pixel_degrees / 4.0;
        let bounds = format!("ST_Extent(ST_TileEnvelope({z}, {x}, {y})), {EXTENT}, {BUFFER}, true");
        let inside = format!(
            "(ST_XMin(g) >= {west:?} AND ST_YMin(g) >= {south:?} AND ST_XMax(g) <= {east:?} AND ST_YMax(g) <= {north:?})"
        );
        let sql = format!(
            "WITH t AS MATERIALIZED ( \
               SELECT coalesce(TRY(ST_AsMVTGeom(m, {bounds})), \
                   TRY(ST_AsMVTGeom(ST_MakeValid(ST_SimplifyPreserveTopology(m, {resolution:?})), {bounds}))) AS geom, \
                 * EXCLUDE (m) \
               FROM (SELECT ST_Transform(ST_CollectionExtract(cut), 'EPSG:4326', 'EPSG:3857', always_xy := true) AS m, * EXCLUDE (cut) \
                 FROM (SELECT coalesce(c, TRY(ST_Intersection(ST_MakeValid(g), {clip}))) AS cut, c IS NULL AS __repaired, * EXCLUDE (c, g) \
                   FROM (SELECT CASE WHEN {inside} THEN g ELSE TRY(ST_Intersection(g, {clip})) END AS c, * \
                     FROM (SELECT ST_Simplify(g0, {tolerance:?}) AS g, * EXCLUDE (g0) \
                       FROM (SELECT {lon_lat} AS g0, * EXCLUDE (geom{keys}) FROM {table}) \
                       WHERE ST_Intersects_Extent(g0, {clip})))) \
                 WHERE cut IS NOT NULL AND NOT ST_IsEmpty(cut))) \
             SELECT count(*) FILTER (WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom)), \
               count(*) FILTER (WHERE geom IS NULL), count(*) FILTER (WHERE __repaired), \
               (SELECT ST_AsMVT(u, {name}, {EXTENT}, 'geom') FROM \
                 (SELECT * EXCLUDE (__repaired) FROM t WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom)) AS u) \
             FROM t",
            name = string(name),
            lon_lat = lon_lat_geometry(layer),
            table = self.location.layer(&layer.table_name),
            keys = self.location.key_columns(),
        );
        // ST_AsMVT of no rows is a tile with an empty layer, not nothing: count them.
        let (features, dropped, repaired, tile): (i64, i64, i64, Option<Vec<u8>>) = self
            .reader()?
            .query_row(&sql, [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .map_err(query_error(&sql))?;
        if repaired > 0 {
            tracing::info!(layer = %layer.name, z, x, y, repaired, "invalid geometries made valid to cut a tile");
        }
        if dropped > 0 {
            tracing::debug!(layer = %layer.name, z, x, y, dropped, "features left out of a tile: collapsed at this zoom, or GEOS could not encode them");
        }
        Ok(if features == 0 {
            Vec::new()
        } else {
            tile.unwrap_or_default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::tile_bounds;

    #[test]
    fn tile_bounds_follow_the_slippy_map_scheme() {
        assert_eq!(
            tile_bounds(0, 0, 0, 0.0),
            [-180.0, -85.051_128_779_806_6, 180.0, 85.051_128_779_806_6]
        );
        let [west, south, east, north] = tile_bounds(1, 1, 0, 0.0);
        assert!((west - 0.0).abs() < 1e-9 && (east - 180.0).abs() < 1e-9);
        assert!(south.abs() < 1e-9 && (north - 85.051_128_779_806_6).abs() < 1e-9);
    }
}
