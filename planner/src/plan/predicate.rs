//! The binary spatial predicates joins, aggregates and selections test, and their SQL names.

use serde::{Deserialize, Serialize};

/// A binary spatial predicate `P(left.geom, right.geom)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SpatialPredicate {
    Intersects,
    Within,
    Contains,
    Touches,
    Overlaps,
    Crosses,
    Covers,
    CoveredBy,
    /// Within `distance` (CRS units) of each other.
    Dwithin,
}

impl SpatialPredicate {
    pub fn sql_function(self) -> &'static str {
        match self {
            Self::Intersects => "ST_Intersects",
            Self::Within => "ST_Within",
            Self::Contains => "ST_Contains",
            Self::Touches => "ST_Touches",
            Self::Overlaps => "ST_Overlaps",
            Self::Crosses => "ST_Crosses",
            Self::Covers => "ST_Covers",
            Self::CoveredBy => "ST_CoveredBy",
            Self::Dwithin => "ST_DWithin",
        }
    }
}
