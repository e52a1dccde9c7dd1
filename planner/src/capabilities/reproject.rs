//! `reproject`: transform every geometry to another coordinate reference system.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::schema::{FieldType, GEOM};

/// Transform each geometry from the CRS `from` (default: the input's CRS) to the CRS `to`, both
/// written `EPSG:<code>`, e.g. `EPSG:3857`. Attributes are unchanged. `from` overrides the CRS
/// the input declares: give it when that is not known (the step fails without it) or wrong.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Reproject {
    /// Target CRS, `EPSG:<code>`.
    #[schemars(length(min = 1))]
    pub to: String,
    /// Source CRS, `EPSG:<code>` (default: the input's CRS).
    #[serde(default)]
    pub from: Option<String>,
    /// Reproject only data in longitude/latitude (a projected layer passes unchanged), as
    /// GISPulse's graph tools do (default false).
    #[serde(default)]
    pub only_lon_lat: bool,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// Whether `crs` is written `EPSG:<code>`.
fn is_epsg(crs: &str) -> bool {
    crs.strip_prefix("EPSG:").is_some_and(|code| {
        !code.is_empty() && code.len() <= 9 && code.bytes().all(|b| b.is_ascii_digit())
    })
}

pub(super) fn check_crs(crs: &str, ctx: &LowerContext<'_>, param: &str) -> Result<(), Problem> {
    if is_epsg(crs) {
        Ok(())
    } else {
        Err(Problem::new(
            ctx.at(param),
            format!("expected a CRS written EPSG:<code> (e.g. EPSG:4326), got {crs:?}"),
        ))
    }
}

impl CapabilityParams for Reproject {
    const NAME: &'static str = "reproject";
    const GROUP: Group = Group::VectorGeometry;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut problems = Vec::new();
        let projected = matches!(
            ctx.crs().and_then(crate::schema::crs_units),
            Some(crate::schema::CrsUnits::Linear { .. })
        );
        if self.only_lon_lat && projected {
            // The layer as it is (a map that changes nothing).
            return check_crs(&self.to, ctx, "to")
                .map(|()| vec![Operator::Map(MapOp::default())])
                .map_err(|p| vec![p]);
        }
        if let Err(problem) = check_crs(&self.to, ctx, "to") {
            problems.push(problem);
        }
        let from = match (&self.from, ctx.crs()) {
            (Some(from), _) => {
                if let Err(problem) = check_crs(from, ctx, "from") {
                    problems.push(problem);
                }
                Some(from.clone())
            }
            (None, Some(crs)) => Some(crs.to_owned()),
            (None, None) => {
                problems.push(Problem::new(
                    ctx.at("from"),
                    "the input's CRS is not known: give from",
                ));
                None
            }
        };
        match from {
            Some(from) if problems.is_empty() => {
                let value = ValueExpr::Geo(GeoExpr::Transform {
                    from,
                    to: self.to.clone(),
                });
                Ok(vec![Operator::Map(MapOp {
                    set: vec![(GEOM.to_owned(), value, FieldType::Geometry)],
                    ..MapOp::default()
                })])
            }
            _ => Err(problems),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::Schema;

    fn lower(params: serde_json::Value, crs: Option<&str>) -> Result<Vec<Operator>, Vec<Problem>> {
        let params: Reproject = serde_json::from_value(params).unwrap();
        let schema = Schema {
            columns: Vec::new(),
            crs: crs.map(str::to_owned),
        };
        let ctx = LowerContext {
            step_id: "r",
            path: "p",
            input: Some(&schema),
            others: &[],
            rasters: None,
        };
        params.lower(&ctx)
    }

    #[test]
    fn source_crs_defaults_to_the_input() {
        let ops = lower(json!({"to": "EPSG:3857"}), Some("EPSG:4326")).unwrap();
        let [Operator::Map(map)] = ops.as_slice() else {
            panic!("{ops:?}")
        };
        assert_eq!(
            map.set[0].1,
            ValueExpr::Geo(GeoExpr::Transform {
                from: "EPSG:4326".into(),
                to: "EPSG:3857".into()
            })
        );
        assert!(lower(json!({"to": "EPSG:3857", "from": "EPSG:2154"}), None).is_ok());
        let kept = lower(json!({"to": "EPSG:3857", "only_lon_lat": true}), Some("EPSG:2263")).unwrap();
        assert_eq!(kept, vec![Operator::Map(MapOp::default())]);
        let moved = lower(json!({"to": "EPSG:3857", "only_lon_lat": true}), Some("EPSG:4326")).unwrap();
        assert_ne!(moved, kept);
    }

    #[test]
    fn bad_crs_are_reported() {
        let problems = lower(json!({"to": "EPSG:3857"}), None).unwrap_err();
        assert_eq!(problems[0].path, "p.from");
        let problems = lower(json!({"to": "3857", "from": "EPSG:4326'; --"}), None).unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["p.to", "p.from"]);
    }
}
