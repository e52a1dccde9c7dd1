//! The SQL dialects geomill emits, and the few spellings that differ between them.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// DuckDB with the spatial extension.
    Duckdb,
    /// PostgreSQL with PostGIS.
    Postgis,
}

impl Dialect {
    pub const ALL: [Self; 2] = [Self::Duckdb, Self::Postgis];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Duckdb => "duckdb",
            Self::Postgis => "postgis",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "duckdb" | "embedded" => Some(Self::Duckdb),
            "postgis" | "postgres" | "postgresql" => Some(Self::Postgis),
            _ => None,
        }
    }

    /// The aggregate that unions geometries.
    pub fn union_agg(self) -> &'static str {
        match self {
            Self::Duckdb => "ST_Union_Agg",
            Self::Postgis => "ST_Union",
        }
    }

    /// The aggregate collecting the simple parts of the group's geometries `g` as they are
    /// (nested collections and Multi* flattened, NULL and empty geometries and parts left out)
    /// into one Multi* (a GeometryCollection for mixed types; NULL when nothing is left). The
    /// geometries are taken in the order of their WKB's MD5 hash, each one's parts in their
    /// order: both engines collect the same parts in the same order (both `ST_Collect`s nest a
    /// Multi* given with single parts in a GeometryCollection: hence the parts).
    pub fn collect_parts_agg(self, g: &str) -> String {
        let order = format!("md5({})", self.wkb_hex(g));
        match self {
            Self::Duckdb => format!(
                "ST_Collect(list_filter(flatten(list(list_transform(ST_Dump({g}), lambda geomill_dumped: geomill_dumped.geom) ORDER BY {order}) FILTER (WHERE NOT ST_IsEmpty({g}))), lambda geomill_part: NOT ST_IsEmpty(geomill_part)))"
            ),
            Self::Postgis => format!(
                "ST_Collect(ARRAY(SELECT d.part FROM unnest(array_agg({g} ORDER BY {order}) FILTER (WHERE NOT ST_IsEmpty({g}))) WITH ORDINALITY AS s(whole, i), ST_Dump(s.whole) WITH ORDINALITY AS d(path, part, j) WHERE NOT ST_IsEmpty(d.part) ORDER BY s.i, d.j))"
            ),
        }
    }

    /// A geometry's well-known binary as lower-case hex: the same text on both engines for the
    /// same geometry, so orders built on it agree (and do not depend on collations).
    pub fn wkb_hex(self, geom: &str) -> String {
        match self {
            Self::Duckdb => format!("lower(ST_AsHEXWKB({geom}))"),
            Self::Postgis => format!("encode(ST_AsBinary({geom}), 'hex')"),
        }
    }

    /// A one-row query that fails with `message` when it runs: the SQL of a step only the
    /// native backend computes (it runs only if the kernel declines, which says why).
    /// PostgreSQL has no function raising an error, so the message is a relation name that
    /// does not exist.
    pub fn fail(self, message: &str) -> String {
        let message = super::quote::string(&format!("geomill: {message}"));
        match self {
            Self::Duckdb => format!("SELECT error({message})"),
            Self::Postgis => format!("SELECT {message}::regclass"),
        }
    }

    /// An expression that fails the statement with the text `message` (an SQL expression of
    /// the values at hand) when it is evaluated. PostgreSQL has no such function in SQL: the
    /// text cast to an integer fails with the text in the error. The message must depend on
    /// the rows read, or PostgreSQL folds the cast, and fails, when it plans the statement.
    pub fn raise(self, message: &str) -> String {
        match self {
            Self::Duckdb => format!("error({message})"),
            Self::Postgis => format!("CAST({message} AS INTEGER)"),
        }
    }

    /// A geometry's well-known binary (a blob: equal for equal geometries of either engine).
    pub fn wkb(self, geom: &str) -> String {
        match self {
            Self::Duckdb => format!("ST_AsWKB({geom})"),
            Self::Postgis => format!("ST_AsBinary({geom})"),
        }
    }

    /// The discrete Hausdorff distance between `a` and `b`, as GEOS measures it.
    pub fn hausdorff(self, a: &str, b: &str) -> String {
        match self {
            Self::Postgis => format!("ST_HausdorffDistance({a}, {b})"),
            Self::Duckdb => {
                // GEOS measures each vertex's distance to the other geometry's segments (a
                // polygon's rings, not its area).
                let linework = |g: &str| {
                    format!("(CASE WHEN ST_Dimension({g}) = 2 THEN ST_Boundary({g}) ELSE {g} END)")
                };
                let farthest = |from: &str, to: &str| {
                    format!(
                        "list_max(list_transform(ST_Dump(ST_Points({from})), lambda geomill_vertex: ST_Distance(geomill_vertex.geom, {})))",
                        linework(to)
                    )
                };
                format!("greatest({}, {})", farthest(a, b), farthest(b, a))
            }
        }
    }

    /// `CREATE ... AS` for a step's output table: the statements, each run on its own.
    pub fn create_table(self, name: &str, query: &str) -> Vec<String> {
        let name = super::quote::ident(name);
        match self {
            Self::Duckdb => vec![format!("CREATE OR REPLACE TEMP TABLE {name} AS\n{query}")],
            Self::Postgis => vec![
                format!("DROP TABLE IF EXISTS {name}"),
                format!("CREATE TEMP TABLE {name} AS\n{query}"),
            ],
        }
    }
}
