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

    /// `CREATE ... AS` for a step's output table.
    pub fn create_table(self, name: &str, query: &str) -> String {
        let name = super::quote::ident(name);
        match self {
            Self::Duckdb => format!("CREATE OR REPLACE TEMP TABLE {name} AS\n{query}"),
            Self::Postgis => {
                format!("DROP TABLE IF EXISTS {name};\nCREATE TEMP TABLE {name} AS\n{query}")
            }
        }
    }
}
