//! `pointcloud_load_las`: a point cloud's points, chosen by class and count, in a CRS.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::checks::parse_expr;
use super::reproject::check_crs;
use super::{CapabilityParams, CommonParams, Group, LowerContext, replace_geometry};
use crate::error::Problem;
use crate::plan::operator::{GeoExpr, MapOp, Operator, ValueExpr};
use crate::plan::ops::head::HeadOp;
use crate::schema::{FieldType, GEOM};

/// The points of the input point cloud (a LAS/LAZ dataset: `"input": "scan"`) whose class is
/// one of `classifications` (all when absent or empty), then the first `max_points` of them in
/// the file's order, declared in `crs` (`EPSG:<code>`, no coordinate changed; default the
/// file's). `columns: gispulse` keeps GISPulse's columns (`z`, `classification`, `intensity`,
/// `return_number`, `number_of_returns`, `scan_angle_rank` for formats 0-5 or the raw
/// `scan_angle` in 0.006° steps for 6-10, `user_data`, `point_source_id`, `gps_time` when the
/// format has it, the geometry); `all` (default) every dimension. As GISPulse's
/// `pointcloud_load_las`, whose `path` names the dataset uploaded from that file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct PointcloudLoadLas {
    /// The ASPRS classes to keep (default: every class).
    #[serde(default)]
    pub classifications: Option<Vec<i64>>,
    /// Keep at most this many points, the first in the file's order.
    #[serde(default)]
    pub max_points: Option<u64>,
    /// The CRS to declare, `EPSG:<code>` (default: the file's).
    #[serde(default)]
    pub crs: Option<String>,
    /// Which columns: every dimension (`all`) or GISPulse's (`gispulse`).
    #[serde(default)]
    pub columns: LasColumns,
    #[serde(flatten)]
    pub common: CommonParams,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LasColumns {
    #[default]
    All,
    Gispulse,
}

/// GISPulse's columns after the scan angle, when the layer has them.
const AFTER_ANGLE: [&str; 3] = ["user_data", "point_source_id", "gps_time"];

impl CapabilityParams for PointcloudLoadLas {
    const NAME: &'static str = "pointcloud_load_las";
    const GROUP: Group = Group::PointCloud;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let mut operators = Vec::new();
        if let Some(codes) = self.classifications.as_ref().filter(|c| !c.is_empty()) {
            let listed: Vec<String> = codes.iter().map(i64::to_string).collect();
            // Integers printed from parsed numbers: the text holds nothing of the request's.
            let condition = format!("\"classification\" IN ({})", listed.join(", "));
            let predicate = parse_expr(&condition, ctx, "classifications")?;
            operators.push(Operator::Filter { predicate });
        }
        if let Some(rows) = self.max_points {
            operators.push(Operator::owned(HeadOp { rows }));
        }
        if let Some(crs) = &self.crs {
            check_crs(crs, ctx, "crs").map_err(|problem| vec![problem])?;
            operators.extend(replace_geometry(GeoExpr::SetCrs { crs: crs.clone() }));
        }
        if self.columns == LasColumns::Gispulse
            && let Some(schema) = ctx.input
        {
            let mut columns: Vec<String> = [
                "z",
                "classification",
                "intensity",
                "return_number",
                "number_of_returns",
            ]
            .map(str::to_owned)
            .to_vec();
            if schema.has("scan_angle_rank") {
                columns.push("scan_angle_rank".into());
            } else {
                // Formats 6-10 store 0.006° steps, which GISPulse reads raw.
                let steps = parse_expr(
                    "CAST(round(\"scan_angle\" / 0.006) AS BIGINT)",
                    ctx,
                    "columns",
                )?;
                operators.push(Operator::Map(MapOp {
                    set: vec![(
                        "scan_angle".into(),
                        ValueExpr::Sql(steps),
                        FieldType::Integer,
                    )],
                    ..MapOp::default()
                }));
                columns.push("scan_angle".into());
            }
            columns.extend(
                AFTER_ANGLE
                    .iter()
                    .filter(|c| schema.has(c))
                    .map(|c| (*c).to_owned()),
            );
            columns.push(GEOM.to_owned());
            let missing: Vec<&String> = columns.iter().filter(|c| !schema.has(c)).collect();
            if !missing.is_empty() {
                return Err(vec![Problem::new(
                    ctx.at("columns"),
                    format!(
                        "the input is not a point cloud's layer (no {})",
                        missing
                            .iter()
                            .map(|c| c.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )]);
            }
            operators.push(Operator::Project { columns });
        }
        if operators.is_empty() {
            // Every point as it is.
            let predicate = parse_expr("1 = 1", ctx, "classifications")?;
            operators.push(Operator::Filter { predicate });
        }
        Ok(operators)
    }
}
