//! Geometry types as each engine names them, for the SQL of `GeoExpr` (type tests that give
//! the same answer on DuckDB and PostGIS, and the conversions between types built on them),
//! and the M-dropping both engines agree on.

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

/// A geometry type with its Multi* form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Point and MultiPoint.
    Point,
    /// LineString and MultiLineString.
    Line,
    /// Polygon and MultiPolygon.
    Polygon,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Self::Point => "point",
            Self::Line => "line",
            Self::Polygon => "polygon",
        }
    }

    pub(super) fn kinds(self) -> [Kind; 2] {
        match self {
            Self::Point => [Kind::Point, Kind::MultiPoint],
            Self::Line => [Kind::LineString, Kind::MultiLineString],
            Self::Polygon => [Kind::Polygon, Kind::MultiPolygon],
        }
    }
}

/// `g` as a Multi*: an empty single geometry becomes a Multi* of no parts (DuckDB's ST_Multi
/// gives one empty part, PostGIS's none).
pub(super) fn force_multi(g: &str, dialect: Dialect) -> String {
    let empty = format!(
        "ST_CollectionExtract(ST_GeomFromText('GEOMETRYCOLLECTION EMPTY'), ST_Dimension({g}) + 1)"
    );
    let empty = match dialect {
        Dialect::Duckdb => empty,
        Dialect::Postgis => format!("ST_SetSRID({empty}, ST_SRID({g}))"),
    };
    format!(
        "CASE WHEN ST_IsEmpty({g}) AND {} THEN {empty} ELSE ST_Multi({g}) END",
        kind_in(g, &Kind::SINGLE, dialect)
    )
}

/// A one-part Multi* `g` as its part (with `first_part`, any Multi* of parts as its first).
pub(super) fn force_single(g: &str, first_part: bool, dialect: Dialect) -> String {
    let part = match dialect {
        Dialect::Duckdb => format!("ST_Dump({g})[1].geom"),
        Dialect::Postgis => format!("ST_GeometryN({g}, 1)"),
    };
    let parts = if first_part { ">= 1" } else { "= 1" };
    format!(
        "CASE WHEN {} AND ST_NumGeometries({g}) {parts} THEN {part} ELSE {g} END",
        kind_in(g, &Kind::MULTI, dialect)
    )
}

/// `g` when of `family`, NULL or empty; otherwise NULL, or a failed statement when `fail`.
pub(super) fn of_family(g: &str, family: Family, fail: bool, dialect: Dialect) -> String {
    let other = if fail {
        let raise = dialect.raise(&format!(
            "'geomill: a ' || ST_GeometryType({g}) || ' is not a {}'",
            family.name()
        ));
        match dialect {
            Dialect::Duckdb => raise,
            // PostgreSQL's raise is an integer: typed as a geometry, never reached.
            Dialect::Postgis => format!("ST_GeomFromText(CAST({raise} AS text))"),
        }
    } else {
        "NULL".to_owned()
    };
    format!(
        "CASE WHEN ST_IsEmpty({g}) OR {} THEN {g} ELSE {other} END",
        kind_in(g, &family.kinds(), dialect)
    )
}
