//! `on_invalid`: what a geometry step does with invalid geometries (self-intersecting rings,
//! holes crossing their shell, spikes), which real layers hold and GEOS's overlay and union
//! refuse ("TopologyException: side location conflict").

use schemars::JsonSchema;
use serde::Deserialize;

use crate::expr::SqlExpr;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// What to do with invalid input geometries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnInvalid {
    /// Make them valid first (GEOS `MakeValid`, keeping the parts of the input's dimension:
    /// a bow tie becomes two triangles); valid geometries are left as they are. The default.
    #[default]
    Fix,
    /// Leave the features with invalid geometries out (NULL geometries stay).
    Skip,
    /// Use them as they are: the engine fails on the first one its operation cannot take.
    Error,
}

impl OnInvalid {
    /// The operators that prepare a step's main input by the policy, to run before the step's
    /// own.
    pub fn prepare(self) -> Vec<Operator> {
        match self {
            Self::Fix => vec![Operator::Map(MapOp {
                set: vec![(
                    GEOM.to_owned(),
                    ValueExpr::Geo(GeoExpr::MakeValid),
                    FieldType::Geometry,
                )],
                ..MapOp::default()
            })],
            Self::Skip => match SqlExpr::parse(&format!("{GEOM} IS NULL OR ST_IsValid({GEOM})")) {
                Ok(predicate) => vec![Operator::Filter { predicate }],
                Err(_) => Vec::new(),
            },
            Self::Error => Vec::new(),
        }
    }

    /// `prepare`'s operators followed by the step's own.
    pub fn before(self, step: Vec<Operator>) -> Vec<Operator> {
        let mut operators = self.prepare();
        operators.extend(step);
        operators
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_policy_prepares_the_input_its_way() {
        assert!(matches!(
            OnInvalid::Fix.prepare().as_slice(),
            [Operator::Map(MapOp { set, .. })] if matches!(set[0].1, ValueExpr::Geo(GeoExpr::MakeValid))
        ));
        assert!(matches!(
            OnInvalid::Skip.prepare().as_slice(),
            [Operator::Filter { .. }]
        ));
        assert!(OnInvalid::Error.prepare().is_empty());
        let policy: OnInvalid = serde_json::from_str("\"skip\"").unwrap_or_default();
        assert_eq!(policy, OnInvalid::Skip);
    }
}
