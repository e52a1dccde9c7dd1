//! Geometry types as each engine names them, for the SQL of `GeoExpr` (type tests that give
//! the same answer on DuckDB and PostGIS), and the M-dropping both engines agree on.

use crate::sql::Dialect;
use crate::sql::quote::string;

/// A geometry type as `ST_GeometryType` names it on each engine (DuckDB: `POINT`; PostGIS:
/// `ST_Point`, whatever the geometry's Z and M).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    Point,
    LineString,
    Polygon,
    MultiPoint,
    MultiLineString,
    MultiPolygon,
    GeometryCollection,
}

impl Kind {
    pub(super) const SINGLE: [Self; 3] = [Self::Point, Self::LineString, Self::Polygon];
    pub(super) const MULTI: [Self; 3] =
        [Self::MultiPoint, Self::MultiLineString, Self::MultiPolygon];

    fn name(self, dialect: Dialect) -> &'static str {
        let (duckdb, postgis) = match self {
            Self::Point => ("POINT", "ST_Point"),
            Self::LineString => ("LINESTRING", "ST_LineString"),
            Self::Polygon => ("POLYGON", "ST_Polygon"),
            Self::MultiPoint => ("MULTIPOINT", "ST_MultiPoint"),
            Self::MultiLineString => ("MULTILINESTRING", "ST_MultiLineString"),
            Self::MultiPolygon => ("MULTIPOLYGON", "ST_MultiPolygon"),
            Self::GeometryCollection => ("GEOMETRYCOLLECTION", "ST_GeometryCollection"),
        };
        match dialect {
            Dialect::Duckdb => duckdb,
            Dialect::Postgis => postgis,
        }
    }
}

/// Whether the geometry `g` is of one of `kinds` (NULL for a NULL geometry).
pub(crate) fn kind_in(g: &str, kinds: &[Kind], dialect: Dialect) -> String {
    let names: Vec<String> = kinds.iter().map(|k| string(k.name(dialect))).collect();
    match names.as_slice() {
        [one] => format!("ST_GeometryType({g}) = {one}"),
        _ => format!("ST_GeometryType({g}) IN ({})", names.join(", ")),
    }
}

/// `g` without M values (Z kept), the same on both engines: `ST_Force3DZ` keeps existing Z.
pub(super) fn without_m(g: &str) -> String {
    format!("CASE WHEN ST_ZMFlag({g}) IN (2, 3) THEN ST_Force3DZ({g}, 0) ELSE ST_Force2D({g}) END")
}
