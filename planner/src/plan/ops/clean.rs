//! Polygon cleaning over the layer as a whole (gaps filled, overlaps given one owner, slivers
//! merged, borders snapped): each feature's answer depends on its neighbours, so no SQL engine
//! computes it; the native backend does, in every engine mode.

use serde::{Deserialize, Serialize};

use crate::plan::owned::{OwnedOperator, first_schema};
use crate::schema::Schema;
use crate::sql::dialect::Dialect;

/// Which of the overlapping features keeps an overlap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OverlapOwner {
    /// The feature of the largest area (before cleaning).
    Largest,
    /// The feature of the smallest area (before cleaning).
    Smallest,
    /// The first feature by `order_by` (ascending, NULLs last), or by row order without it.
    First,
}

impl OverlapOwner {
    /// The rule's name as users write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Largest => "largest",
            Self::Smallest => "smallest",
            Self::First => "first",
        }
    }
}

/// One cleaning of the layer's polygons.
#[derive(Debug, Clone, PartialEq)]
pub enum CleanOp {
    /// Holes of the union of the layer's polygons of at most `max_area` filled, each into the
    /// feature sharing the longest border with it.
    FixGaps { max_area: f64 },
    /// Every area covered by several features kept by one (`owner`), cut from the others.
    FixOverlaps {
        owner: OverlapOwner,
        order_by: Option<String>,
    },
    /// Features below every threshold given merged into the neighbour sharing the longest
    /// border; without one, kept (`keep_isolated`) or dropped.
    RemoveSlivers {
        max_area: Option<f64>,
        max_thinness: Option<f64>,
        keep_isolated: bool,
    },
    /// Each feature's vertices snapped to the features before it within `tolerance`.
    SnapBorders { tolerance: f64 },
}

impl CleanOp {
    /// The input columns the cleaning reads besides the geometry.
    pub fn reads(&self) -> Vec<String> {
        match self {
            Self::FixOverlaps {
                order_by: Some(field),
                ..
            } => vec![field.clone()],
            _ => Vec::new(),
        }
    }

    /// The operator in EXPLAIN text.
    pub fn describe(&self) -> String {
        match self {
            Self::FixGaps { max_area } => format!("fix_gaps max_area={max_area}"),
            Self::FixOverlaps { owner, order_by } => format!(
                "fix_overlaps owner={}{}",
                owner.as_str(),
                order_by
                    .as_ref()
                    .map(|f| format!(" order_by={f}"))
                    .unwrap_or_default()
            ),
            Self::RemoveSlivers {
                max_area,
                max_thinness,
                keep_isolated,
            } => format!(
                "remove_slivers max_area={} max_thinness={} keep_isolated={keep_isolated}",
                max_area.map_or("none".to_owned(), |v| v.to_string()),
                max_thinness.map_or("none".to_owned(), |v| v.to_string()),
            ),
            Self::SnapBorders { tolerance } => format!("snap_borders tolerance={tolerance}"),
        }
    }

    /// How the native kernel computes it, in a line.
    pub fn kernel(&self) -> &'static str {
        match self {
            Self::FixGaps { .. } => {
                "the union of every polygon, its holes within the threshold each given to the feature whose boundary covers the most of it (an R-tree finds the candidates)"
            }
            Self::FixOverlaps { .. } => {
                "features ranked by the rule, each cut by the union of the higher-ranked features it meets (an R-tree), rows in parallel"
            }
            Self::RemoveSlivers { .. } => {
                "slivers found by area and thinness, each unioned into the neighbour sharing the longest border (an R-tree)"
            }
            Self::SnapBorders { .. } => {
                "features in row order, each snapped (GEOS snap) to the snapped features before it within the tolerance, then made valid"
            }
        }
    }
}

impl OwnedOperator for CleanOp {
    fn name(&self) -> &'static str {
        "Clean"
    }

    fn explain(&self) -> String {
        self.describe()
    }

    fn reads(&self) -> Vec<String> {
        CleanOp::reads(self)
    }

    fn output_schema(&self, inputs: &[Option<&Schema>]) -> Option<Schema> {
        first_schema(inputs).cloned()
    }

    fn native_only(&self) -> bool {
        true
    }

    fn sql_missing(&self, _dialect: Dialect) -> Option<String> {
        Some(format!(
            "{} runs on the native backend: each feature's answer depends on its neighbours",
            self.describe()
        ))
    }

    fn native_kernel(&self) -> Result<String, String> {
        Ok(format!("{}: {}", self.describe(), self.kernel()))
    }
}
