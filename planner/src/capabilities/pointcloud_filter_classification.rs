//! `pointcloud_filter_classification`: keep or drop the points of ASPRS classes.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::Operator;
use crate::sql::quote::ident;

/// Keep (`keep`) or drop (`drop`) the points whose class is one of the ASPRS codes listed
/// (2 ground, 3-5 vegetation, 6 building, 7 noise, 9 water, ...), read from the integer column
/// `col` (default `classification`, as a point cloud's layer has it): one of the two, not
/// both. `keep: []` keeps nothing and `drop: []` everything; a point whose class is NULL is
/// dropped by `keep` and kept by `drop`. Rows keep their order and columns. As GISPulse's
/// `pointcloud_filter_classification`; runs on every engine as a filter.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct PointcloudFilterClassification {
    /// The class codes to keep.
    #[serde(default)]
    pub keep: Option<Vec<i64>>,
    /// The class codes to drop.
    #[serde(default)]
    pub drop: Option<Vec<i64>>,
    /// The class column (default `classification`).
    #[serde(default = "classification")]
    #[schemars(length(min = 1))]
    pub col: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn classification() -> String {
    "classification".into()
}

impl CapabilityParams for PointcloudFilterClassification {
    const NAME: &'static str = "pointcloud_filter_classification";
    const GROUP: Group = Group::PointCloud;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        let (codes, keep) = match (&self.keep, &self.drop) {
            (Some(codes), None) => (codes, true),
            (None, Some(codes)) => (codes, false),
            (None, None) => {
                return Err(vec![Problem::new(
                    ctx.at("keep"),
                    "give `keep` (the classes to keep) or `drop` (the classes to drop)",
                )]);
            }
            (Some(_), Some(_)) => {
                return Err(vec![Problem::new(
                    ctx.at("drop"),
                    "give either `keep` or `drop`, not both",
                )]);
            }
        };
        let column = ident(&self.col);
        let listed: Vec<String> = codes.iter().map(i64::to_string).collect();
        // The integers are printed from parsed numbers and the column is quoted: the text
        // holds nothing of the request's own.
        let condition = match (listed.is_empty(), keep) {
            (true, true) => "1 = 0".to_owned(),
            (true, false) => "1 = 1".to_owned(),
            (false, true) => format!("{column} IN ({})", listed.join(", ")),
            (false, false) => format!(
                "{column} IS NULL OR NOT ({column} IN ({}))",
                listed.join(", ")
            ),
        };
        let predicate = super::checks::parse_expr(&condition, ctx, "col")?;
        Ok(vec![Operator::Filter { predicate }])
    }
}
