//! The logical operators a capability lowers to. A small relational algebra with geometry:
//! dialect emitters print each operator; the optimizer rewrites them.

use serde::{Deserialize, Serialize};

use crate::expr::SqlExpr;
use crate::schema::FieldType;

pub use super::geo_expr::{Family, GeoExpr, MAX_DENSIFIED_VERTICES, OffsetJoin, ShapeExpr};
pub use super::network::{GraphSpec, NetworkAnalysis, NetworkOp};
pub use super::ops::clean::{CleanOp, OverlapOwner};
pub use super::ops::line_clean::{DangleMethod, DuplicateRule, LineCleanOp, SnapRule, SnapTarget};
pub use super::ops::scale::{
    ClassColors, ClassMethod, KMeansMethod, NormalizeMethod, RampColors, RampPosition, RampScale,
    ScaleKind, ScaleOp, TimeGate,
};
pub use super::ops::statistics::{
    DensityKernel, GenerateOp, GridAnchor, GridShape, GridSpec, StatisticKind, StatisticOp,
    WeightsKind, WeightsSpec, WeightsTransform,
};
pub use super::ops::tessellate::TessellateOp;
pub use super::owned::Owned;
pub use super::predicate::SpatialPredicate;
pub use super::relational::{
    JoinKey, JoinOp, MAX_PIVOT_FOUND_COLUMNS, PivotFunc, PivotGeometry, PivotOp, ReshapeOp,
    TimeDirection, TimeMatch, UnpivotOp,
};
pub use super::validate::{ValidateCheck, ValidateOp};

/// One node's work.
#[derive(Debug, Clone, PartialEq)]
pub enum Operator {
    /// Read a source (a dataset layer or a table the engine provides); `columns` set by pruning.
    Scan {
        source: String,
        columns: Option<Vec<String>>,
    },
    /// Keep the rows where `predicate` holds.
    Filter { predicate: SqlExpr },
    /// Drop, rename and set columns; rows unchanged.
    Map(MapOp),
    /// Keep exactly `columns`, in this order; rows unchanged.
    Project { columns: Vec<String> },
    /// Join the second input's attributes to the first input's rows on key fields.
    Join(JoinOp),
    /// A new table made from the input's rows (pivot, unpivot, per-field summary).
    Reshape(ReshapeOp),
    /// A layer of the problems found in the input (geometry, topology, duplicates, attribute
    /// rules), or their counts.
    Validate(ValidateOp),
    /// Group rows (all rows when `group_by` is empty), aggregating attributes and optionally
    /// unioning geometries.
    Aggregate(AggregateOp),
    /// Join the second input's columns to the first input's rows where geometries match.
    SpatialJoin(SpatialJoinOp),
    /// For each row of the first input, aggregate the matching rows of the second input.
    SpatialAggregate(SpatialAggregateOp),
    /// Keep the rows of the first input that match (or, negated, do not match) any row of the
    /// second input.
    SpatialFilter(SpatialFilterOp),
    /// Attach the nearest row of the second input.
    Nearest(NearestOp),
    /// Geometric overlay of the first input with the second.
    Overlay(OverlayOp),
    /// All rows of every input, columns matched by name (missing ones NULL).
    Concat,
    /// Order rows; with `limit`, keep only the first `limit` rows of that order.
    Sort {
        keys: Vec<SortKey>,
        limit: Option<u64>,
    },
    /// One row per distinct combination of `columns`, the one `keep` chooses.
    Distinct {
        columns: Vec<String>,
        keep: DistinctKeep,
    },
    /// A reproducible random sample of `rows` rows.
    Sample { rows: u64, seed: u64 },
    /// An analysis over the graph of the first input's lines (the point layers it needs
    /// follow).
    Network(NetworkOp),
    /// Write the input to a file (a sink: nothing consumes it).
    Export(ExportOp),
    /// An operator that owns its parts (`plan/ops/`): every site delegates to it.
    Owned(Owned),
}

impl Operator {
    /// A plan node of an operator that owns its parts.
    pub fn owned(op: impl super::owned::OwnedOperator) -> Self {
        Self::Owned(Owned::new(op))
    }

    /// The operator's name in EXPLAIN text.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Scan { .. } => "Scan",
            Self::Filter { .. } => "Filter",
            Self::Map(_) => "Map",
            Self::Project { .. } => "Project",
            Self::Join(_) => "Join",
            Self::Reshape(_) => "Reshape",
            Self::Validate(_) => "Validate",
            Self::Aggregate(_) => "Aggregate",
            Self::SpatialJoin(_) => "SpatialJoin",
            Self::SpatialAggregate(_) => "SpatialAggregate",
            Self::SpatialFilter(_) => "SpatialFilter",
            Self::Nearest(_) => "Nearest",
            Self::Overlay(_) => "Overlay",
            Self::Concat => "Concat",
            Self::Sort { .. } => "Sort",
            Self::Distinct { .. } => "Distinct",
            Self::Sample { .. } => "Sample",
            Self::Network(_) => "Network",
            Self::Export(_) => "Export",
            Self::Owned(o) => o.name(),
        }
    }

    /// The input columns the operator names (of either input, for two-input operators): what a
    /// source must have for the operator to apply. Derived columns a later step reads are
    /// named by that step.
    pub fn reads(&self) -> Vec<String> {
        let named = |c: &Option<String>| c.clone();
        match self {
            Self::Scan { columns, .. } => columns.clone().unwrap_or_default(),
            Self::Filter { predicate } => predicate.columns().into_iter().collect(),
            Self::Map(map) => map
                .drop
                .iter()
                .cloned()
                .chain(map.rename.iter().map(|(from, _)| from.clone()))
                .chain(map.set.iter().flat_map(|(_, value, _)| value.columns()))
                .collect(),
            Self::Aggregate(a) => a
                .group_by
                .iter()
                .cloned()
                .chain(a.aggregates.iter().filter_map(|i| named(&i.column)))
                .collect(),
            Self::SpatialAggregate(a) => a
                .aggregates
                .iter()
                .filter_map(|i| named(&i.column))
                .collect(),
            Self::Nearest(NearestOp { columns, .. }) => columns.named().to_vec(),
            Self::SpatialJoin(SpatialJoinOp { columns, .. })
            | Self::Overlay(OverlayOp { columns, .. })
            | Self::Distinct { columns, .. } => columns.clone(),
            Self::Sort { keys, .. } => keys.iter().map(|k| k.column.clone()).collect(),
            Self::Project { columns } => columns.clone(),
            Self::Join(j) => j.reads(),
            Self::Reshape(r) => r.reads(),
            Self::Owned(o) => o.reads(),
            Self::Validate(v) => v.reads(),
            Self::Network(n) => n.reads(),
            Self::SpatialFilter(_) | Self::Concat | Self::Sample { .. } | Self::Export(_) => {
                Vec::new()
            }
        }
    }

    /// How many inputs the operator takes (`None`: one or more).
    pub fn arity(&self) -> Option<usize> {
        match self {
            Self::Scan { .. } => Some(0),
            Self::SpatialJoin(_)
            | Self::SpatialAggregate(_)
            | Self::SpatialFilter(_)
            | Self::Nearest(_)
            | Self::Overlay(_)
            | Self::Join(_) => Some(2),
            Self::Validate(v) => Some(v.arity()),
            Self::Concat => None,
            Self::Network(n) => Some(n.arity()),
            Self::Owned(o) => o.arity(),
            _ => Some(1),
        }
    }
}

/// Column changes applied in order: drop, rename, then set.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MapOp {
    pub drop: Vec<String>,
    pub rename: Vec<(String, String)>,
    /// New or replaced columns, each with the type it will have.
    pub set: Vec<(String, ValueExpr, FieldType)>,
}

/// A computed column value.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueExpr {
    /// A checked SQL expression (user-written or built by the planner).
    Sql(SqlExpr),
    /// `CAST(column AS type)`.
    Cast { column: String, to: FieldType },
    /// A geometry function whose SQL differs between dialects.
    Geo(GeoExpr),
}

impl ValueExpr {
    /// The columns this value reads.
    pub fn columns(&self) -> Vec<String> {
        match self {
            Self::Sql(expr) => expr.columns().into_iter().collect(),
            Self::Cast { column, .. } => vec![column.clone()],
            Self::Geo(_) => vec![crate::schema::GEOM.to_owned()],
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct AggregateOp {
    pub group_by: Vec<String>,
    pub aggregates: Vec<AggItem>,
    /// What each group's `geom` is made of (`None`: the output has no geometry).
    pub geometry: Option<GeometryAgg>,
}

/// How a group's geometries become one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeometryAgg {
    /// Their union (dissolved: shared boundaries gone).
    Union,
    /// Their simple parts collected as they are into one Multi* (a GeometryCollection for
    /// mixed dimensions), NULL and empty geometries and parts left out.
    Collect,
}

/// Which row of a group of duplicates `Distinct` keeps.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum DistinctKeep {
    /// The row whose geometry's WKB hashes lowest (a choice every engine makes alike), the
    /// rows ordered by the compared values.
    #[default]
    Hash,
    /// The first row in input order, the rows kept in input order.
    First,
    /// The last row in input order, the rows kept in input order.
    Last,
}

/// `output = func(column)`; `column` is `None` for `count(*)`.
#[derive(Debug, Clone, PartialEq)]
pub struct AggItem {
    pub output: String,
    pub func: AggFunc,
    pub column: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AggFunc {
    Count,
    Sum,
    Avg,
    Mean,
    Min,
    Max,
    /// The first non-NULL value in input order (of any type).
    First,
}

impl AggFunc {
    /// The SQL aggregate function; `first` is not one (see `sql::select::aggregate_sql`).
    pub fn sql(self) -> &'static str {
        match self {
            Self::Count => "count",
            Self::Sum => "sum",
            Self::Avg | Self::Mean => "avg",
            Self::Min => "min",
            Self::Max => "max",
            Self::First => "first",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JoinHow {
    Inner,
    Left,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SpatialJoinOp {
    pub predicate: SpatialPredicate,
    pub distance: Option<f64>,
    pub how: JoinHow,
    /// Columns of the second input to bring; empty: all of its attributes.
    pub columns: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SpatialAggregateOp {
    /// `P(other.geom, row.geom)`: e.g. `within` counts the other rows within each row.
    pub predicate: SpatialPredicate,
    pub distance: Option<f64>,
    pub aggregates: Vec<AggItem>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SpatialFilterOp {
    pub predicate: SpatialPredicate,
    pub distance: Option<f64>,
    /// Keep rows that match none instead of rows that match some.
    pub negate: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NearestOp {
    pub columns: RefColumns,
    /// Match nothing farther than this (CRS units).
    pub max_distance: Option<f64>,
    pub distance_field: String,
    /// Locate each point along its nearest line. With it, only points (or centroids) search and
    /// only lines (LineStrings and MultiLineStrings) are found.
    pub locate: Option<LocateAlong>,
    /// The second input's geometries transformed first, `(from, to)` (a search in a work CRS).
    pub reference_transform: Option<(String, String)>,
}

/// What locating a point along its nearest line gives.
#[derive(Debug, Clone, PartialEq)]
pub struct LocateAlong {
    /// Receives the fraction of the line's length where the point projects.
    pub fraction_field: String,
    /// Receives the distance along the line from its start (CRS units).
    pub measure_field: Option<String>,
    /// Receives the line's 0-based position among the second input's rows.
    pub line_index_field: Option<String>,
    /// A geometry other than a point is located by its centroid.
    pub centroids: bool,
}

impl LocateAlong {
    /// The fields added, with their types.
    pub fn fields(&self) -> Vec<(&str, crate::schema::FieldType)> {
        use crate::schema::FieldType;
        let mut fields = vec![(self.fraction_field.as_str(), FieldType::Double)];
        fields.extend(
            self.measure_field
                .as_deref()
                .map(|f| (f, FieldType::Double)),
        );
        fields.extend(
            self.line_index_field
                .as_deref()
                .map(|f| (f, FieldType::Integer)),
        );
        fields
    }
}

/// The second input's attributes a step brings.
#[derive(Debug, Clone, PartialEq)]
pub enum RefColumns {
    /// Every attribute.
    All,
    /// These, in this order; none for an empty list (the step's own fields only).
    Only(Vec<String>),
}

impl RefColumns {
    /// The `columns` parameter as capabilities take it: an empty list means every attribute.
    pub fn requested(columns: &[String]) -> Self {
        if columns.is_empty() {
            Self::All
        } else {
            Self::Only(columns.to_vec())
        }
    }

    /// The attributes named (none for [`RefColumns::All`]).
    pub fn named(&self) -> &[String] {
        match self {
            Self::All => &[],
            Self::Only(columns) => columns,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverlayMode {
    /// Cut the first input to the union of the second.
    Clip,
    /// Remove the second input's area from the first.
    Erase,
    /// Pairwise intersections, with the attributes of both.
    Intersection,
    /// The parts of each layer's features outside the other layer (the first's erased by the
    /// second and the second's by the first), each with its own attributes.
    SymmetricDifference,
    /// The intersections and the symmetric difference together: every area of either layer
    /// once per overlapping pair, or alone.
    Union,
    /// Each feature of the first input made the symmetric difference of itself and the union
    /// of the second, with its own attributes (NULL and empty geometries left as they are).
    DifferenceWithUnion,
}

#[derive(Debug, Clone, PartialEq)]
pub struct OverlayOp {
    pub mode: OverlayMode,
    /// For `Intersection`: columns of the second input to bring; empty: all of them.
    pub columns: Vec<String>,
    /// Intersections keep only the parts of the input feature's dimension (two polygons
    /// touching along an edge give nothing, not a line).
    pub keep_geom_type: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SortKey {
    pub column: String,
    pub descending: bool,
}

/// File formats geomill writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    Gpkg,
    Geojson,
    Fgb,
    Parquet,
    Shp,
    Csv,
    Kml,
    Gml,
    // LAS 1.4, plain and compressed as LAZ: a point layer (the native crate's
    // `pointcloud_write`). Plain comments: a documented variant changes the JSON Schema's form.
    Las,
    Laz,
}

impl ExportFormat {
    /// The name users write (`gpkg`, `geojson`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Gpkg => "gpkg",
            Self::Geojson => "geojson",
            Self::Fgb => "fgb",
            Self::Parquet => "parquet",
            Self::Shp => "shp",
            Self::Csv => "csv",
            Self::Kml => "kml",
            Self::Gml => "gml",
            Self::Las => "las",
            Self::Laz => "laz",
        }
    }

    /// The GDAL driver that writes it (`None`: written natively, e.g. Parquet).
    pub fn gdal_driver(self) -> Option<&'static str> {
        match self {
            Self::Gpkg => Some("GPKG"),
            Self::Geojson => Some("GeoJSON"),
            Self::Fgb => Some("FlatGeobuf"),
            Self::Shp => Some("ESRI Shapefile"),
            Self::Csv => Some("CSV"),
            Self::Kml => Some("KML"),
            Self::Gml => Some("GML"),
            Self::Parquet | Self::Las | Self::Laz => None,
        }
    }

    /// Why a run's export step cannot write the format (`None`: it can). LAS and LAZ are
    /// written by the native crate from a stored layer or a run's result, not by the engine.
    pub fn step_refusal(self) -> Option<String> {
        matches!(self, Self::Las | Self::Laz).then(|| {
            format!(
                "{} is written from a stored point layer or a run's result (POST /api/portal/datasets/export, GET /jobs/{{id}}/download?format={}, geomill run --output), not by an export step",
                self.as_str(),
                self.as_str()
            )
        })
    }

    /// The format written by its file name's extension.
    pub fn from_extension(path: &str) -> Option<Self> {
        let extension = path.rsplit_once('.')?.1.to_ascii_lowercase();
        Some(match extension.as_str() {
            "gpkg" => Self::Gpkg,
            "geojson" | "json" => Self::Geojson,
            "fgb" => Self::Fgb,
            "parquet" | "geoparquet" => Self::Parquet,
            "shp" | "zip" => Self::Shp,
            "csv" => Self::Csv,
            "kml" => Self::Kml,
            "gml" => Self::Gml,
            "las" => Self::Las,
            "laz" => Self::Laz,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExportOp {
    pub destination: String,
    pub format: ExportFormat,
}
