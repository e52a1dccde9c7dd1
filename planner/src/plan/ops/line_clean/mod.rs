//! Line network cleaning over the layer as a whole: endpoints snapped together, lines split
//! where they cross, pseudo nodes merged away, dangling ends extended, duplicate lines dropped.
//! Each keeps the input's columns; node_lines and remove_duplicates are SQL on both engines,
//! the others run on the native backend on every engine.

mod sql;

use crate::plan::owned::{OwnedOperator, first_input, first_schema};
use crate::schema::{Column, FieldType, GEOM, Schema};
use crate::sql::dialect::Dialect;
use crate::sql::input::Input;

/// The field numbering [`LineCleanOp::Rebuilt`]'s parts.
pub const REBUILT_ID: &str = "id";

/// Where `network_snap_endpoints` moves an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapTarget {
    /// Onto an endpoint of another line.
    Endpoints,
    /// Onto an endpoint of another line, else onto the nearest point of another line.
    Lines,
}

impl SnapTarget {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Endpoints => "endpoints",
            Self::Lines => "lines",
        }
    }
}

/// How `network_snap_endpoints` groups the ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapRule {
    /// Ends in x-then-y order, each onto the nearest kept point of another feature.
    KeptPoints,
    /// GISPulse's rule: LineString ends in row order, bucketed on a grid of the tolerance,
    /// each joining the first nearby bucket whose mean is within reach, then moved to its
    /// bucket's mean.
    GridBuckets,
}

/// How `network_extend_dangles` closes a gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DangleMethod {
    /// A dangling end prolonged along its last segment onto the line it meets.
    Extend,
    /// GISPulse's rule: every LineString end moved onto the nearest point of the nearest other
    /// feature within reach, unless it already touches one.
    NearestPoint,
}

/// Which lines `network_remove_duplicates` takes as equal and which it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DuplicateRule {
    /// Equal normalized geometry (on a grid of the tolerance); one per group kept by order.
    Normalized,
    /// GISPulse's rule: rows in order, each dropped when it equals a kept row within the
    /// tolerance (vertex by vertex, or as LineStrings by discrete Hausdorff distance); NULL
    /// and empty geometries dropped.
    FirstInRowOrder,
}

/// A cleaning step over every line of the input.
#[derive(Debug, Clone, PartialEq)]
pub enum LineCleanOp {
    /// Line endpoints moved onto another line's endpoint (or point) within `tolerance`.
    SnapEndpoints {
        tolerance: f64,
        target: SnapTarget,
        rule: SnapRule,
    },
    /// Every line split where it crosses or touches another, pieces keeping their line's
    /// attributes.
    NodeLines,
    /// Lines meeting at a node of degree 2 merged (only when `fields` are equal).
    RemovePseudoNodes { fields: Vec<String> },
    /// Dangling ends extended along their last segment up to `max_distance` onto a line.
    ExtendDangles {
        max_distance: f64,
        method: DangleMethod,
    },
    /// Every non-empty geometry of the layer made one GEOS result, as GISPulse makes it: with
    /// `merge`, the lines merged at every node two of them meet at (GEOS's LineMerger, whatever
    /// the attributes), else their union noded where they cross (GEOS's UnaryUnion). A new
    /// table of its parts in GEOS's order: `id` from 0 and the geometry, no attributes.
    Rebuilt { merge: bool },
    /// Lines equal to an earlier line (either direction; coordinates on a grid of `tolerance`
    /// when it is > 0) dropped; earlier by `order_by`, then the geometry's WKB, then the other
    /// attributes.
    RemoveDuplicates {
        tolerance: f64,
        order_by: Vec<String>,
        rule: DuplicateRule,
    },
}

impl LineCleanOp {
    /// The output schema: the input's.
    pub fn output_schema(&self, input: &Schema) -> Schema {
        match self {
            Self::Rebuilt { .. } => Schema {
                columns: vec![
                    Column {
                        name: REBUILT_ID.to_owned(),
                        ty: FieldType::Integer,
                    },
                    Column {
                        name: GEOM.to_owned(),
                        ty: FieldType::Geometry,
                    },
                ],
                crs: input.crs.clone(),
            },
            _ => input.clone(),
        }
    }

    /// The columns the operator names.
    pub fn reads(&self) -> Vec<String> {
        match self {
            Self::RemovePseudoNodes { fields } => fields.clone(),
            Self::RemoveDuplicates { order_by, .. } => order_by.clone(),
            _ => Vec::new(),
        }
    }

    /// Whether only the native backend computes it (no SQL on either engine).
    pub fn native_only(&self) -> bool {
        matches!(
            self,
            Self::SnapEndpoints { .. }
                | Self::RemovePseudoNodes { .. }
                | Self::ExtendDangles { .. }
                | Self::Rebuilt { .. }
                | Self::RemoveDuplicates {
                    rule: DuplicateRule::FirstInRowOrder,
                    ..
                }
        )
    }

    /// The operator in EXPLAIN text.
    pub fn describe(&self) -> String {
        match self {
            Self::SnapEndpoints {
                tolerance,
                rule: SnapRule::GridBuckets,
                ..
            } => format!("snap_endpoints tolerance={tolerance} rule=grid_buckets"),
            Self::SnapEndpoints {
                tolerance, target, ..
            } => format!(
                "snap_endpoints tolerance={tolerance} target={}",
                target.as_str()
            ),
            Self::NodeLines => "node_lines".to_owned(),
            Self::Rebuilt { merge: true } => "line_merge_of_layer".to_owned(),
            Self::Rebuilt { merge: false } => "unary_union_of_layer".to_owned(),
            Self::RemovePseudoNodes { fields } => {
                format!("remove_pseudo_nodes fields=[{}]", fields.join(", "))
            }
            Self::ExtendDangles {
                max_distance,
                method: DangleMethod::Extend,
            } => format!("extend_dangles max_distance={max_distance}"),
            Self::ExtendDangles { max_distance, .. } => {
                format!("extend_dangles max_distance={max_distance} method=nearest_point")
            }
            Self::RemoveDuplicates {
                tolerance,
                rule: DuplicateRule::FirstInRowOrder,
                ..
            } => format!("remove_duplicates tolerance={tolerance} rule=first_in_row_order"),
            Self::RemoveDuplicates {
                tolerance,
                order_by,
                ..
            } => format!(
                "remove_duplicates tolerance={tolerance} order_by=[{}]",
                order_by.join(", ")
            ),
        }
    }
}

impl OwnedOperator for LineCleanOp {
    fn name(&self) -> &'static str {
        "LineClean"
    }

    fn explain(&self) -> String {
        self.describe()
    }

    fn reads(&self) -> Vec<String> {
        LineCleanOp::reads(self)
    }

    fn output_schema(&self, inputs: &[Option<&Schema>]) -> Option<Schema> {
        Some(LineCleanOp::output_schema(self, first_schema(inputs)?))
    }

    fn native_only(&self) -> bool {
        LineCleanOp::native_only(self)
    }

    fn sql_missing(&self, _dialect: Dialect) -> Option<String> {
        LineCleanOp::native_only(self).then(|| {
            format!(
                "{} runs on the native backend: it follows the lines as a network",
                self.describe()
            )
        })
    }

    fn sql(
        &self,
        inputs: &[Input<'_>],
        _output: Option<&Schema>,
        dialect: Dialect,
    ) -> Result<String, String> {
        sql::line_clean_sql(self, first_input(inputs, "LineClean")?, dialect)
    }

    fn native_kernel(&self) -> Result<String, String> {
        if !LineCleanOp::native_only(self) {
            return Err("(SQL: noding and deduplicating run on the SQL engine)".to_owned());
        }
        Ok(format!(
            "{}: {}",
            self.describe(),
            match self {
                Self::SnapEndpoints {
                    rule: SnapRule::GridBuckets,
                    ..
                } =>
                    "LineString ends in row order hashed into buckets on a grid of the tolerance, each joining the first of the 3x3 nearby buckets whose mean is within reach, then moved to its bucket's mean",
                Self::SnapEndpoints { .. } =>
                    "endpoints sorted by x then y, each moved onto the nearest kept endpoint (or line) of another line within the tolerance, found through an R-tree",
                Self::RemovePseudoNodes { .. } =>
                    "line ends hashed by their exact coordinates, the lines meeting two at a node grouped and merged by GEOS's line merger",
                Self::ExtendDangles {
                    method: DangleMethod::NearestPoint,
                    ..
                } =>
                    "each LineString end's nearest point on the other features found through an R-tree (GEOS distance), the nearest within reach kept",
                Self::RemoveDuplicates { .. } =>
                    "rows in order, each compared with the kept rows whose boxes are within the tolerance (GEOS equals_exact, discrete Hausdorff for LineStrings) through an R-tree",
                _ =>
                    "each dangling end's ray cut by the other lines found through an R-tree, the nearest crossing kept",
            }
        ))
    }
}
