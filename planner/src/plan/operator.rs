//! The logical operators a capability lowers to. A small relational algebra with geometry:
//! dialect emitters print each operator; the optimizer rewrites them.

use serde::{Deserialize, Serialize};

use crate::expr::SqlExpr;
use crate::schema::FieldType;

pub use super::geo_expr::GeoExpr;
pub use super::statistics::{
    DensityKernel, GenerateOp, GridShape, GridSpec, StatisticKind, StatisticOp, WeightsKind,
    WeightsSpec, WeightsTransform,
};

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
    /// One row per distinct combination of `columns` (the first in input order).
    Distinct { columns: Vec<String> },
    /// A reproducible random sample of `rows` rows.
    Sample { rows: u64, seed: u64 },
    /// Sort the values of a numeric field into classes (breaks computed from all the rows)
    /// and add each row's class and its bounds.
    Classify(ClassifyOp),
    /// A value per row from a field's values over the whole layer (rescaled, a category, a
    /// colour, a symbol size).
    Scale(ScaleOp),
    /// Per-feature statistics over each feature's neighbours (spatial weights).
    Statistic(StatisticOp),
    /// A new layer made from the input as a whole (a grid, a density surface, a neighbours
    /// table).
    Generate(GenerateOp),
    /// Write the input to a file (a sink: nothing consumes it).
    Export(ExportOp),
}

impl Operator {
    /// The operator's name in EXPLAIN text.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Scan { .. } => "Scan",
            Self::Filter { .. } => "Filter",
            Self::Map(_) => "Map",
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
            Self::Classify(_) => "Classify",
            Self::Scale(_) => "Scale",
            Self::Statistic(_) => "Statistic",
            Self::Generate(_) => "Generate",
            Self::Export(_) => "Export",
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
            Self::SpatialJoin(SpatialJoinOp { columns, .. })
            | Self::Nearest(NearestOp { columns, .. })
            | Self::Overlay(OverlayOp { columns, .. })
            | Self::Distinct { columns } => columns.clone(),
            Self::Sort { keys, .. } => keys.iter().map(|k| k.column.clone()).collect(),
            Self::Classify(c) => vec![c.field.clone()],
            Self::Scale(s) => s.reads(),
            Self::Statistic(s) => s.field.iter().cloned().collect(),
            Self::Generate(g) => g.reads(),
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
            | Self::Overlay(_) => Some(2),
            Self::Concat => None,
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
    /// Union the geometries of each group into `geom`.
    pub union_geometry: bool,
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
}

impl AggFunc {
    pub fn sql(self) -> &'static str {
        match self {
            Self::Count => "count",
            Self::Sum => "sum",
            Self::Avg | Self::Mean => "avg",
            Self::Min => "min",
            Self::Max => "max",
        }
    }
}

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
    pub columns: Vec<String>,
    pub max_distance: Option<f64>,
    pub distance_field: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverlayMode {
    /// Cut the first input to the union of the second.
    Clip,
    /// Remove the second input's area from the first.
    Erase,
    /// Pairwise intersections, with the attributes of both.
    Intersection,
}

#[derive(Debug, Clone, PartialEq)]
pub struct OverlayOp {
    pub mode: OverlayMode,
    /// For `Intersection`: columns of the second input to bring; empty: all of them.
    pub columns: Vec<String>,
}

/// How class breaks are computed (each as mapclassify computes it, so the breaks are the
/// same).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClassMethod {
    /// Fisher–Jenks natural breaks: the exact optimum of within-class variance
    /// (`mapclassify.FisherJenks`).
    Jenks,
    /// Classes of equal counts, at linearly interpolated percentiles (`mapclassify.Quantiles`).
    Quantile,
    /// Classes of equal width between the minimum and the maximum
    /// (`mapclassify.EqualInterval`).
    EqualInterval,
    /// Breaks at the mean minus and plus one and two sample standard deviations, and the
    /// maximum (`mapclassify.StdMean`); `classes` is ignored.
    StdDev,
    /// Equally spaced round breaks (1, 2 or 5 times a power of ten) covering the values
    /// (`mapclassify.PrettyBreaks`); the count may differ from `classes`.
    Pretty,
    /// Head/tail breaks for heavy-tailed data: the mean, then the mean of the values above it,
    /// and so on (`mapclassify.HeadTailBreaks`); `classes` is ignored.
    HeadTailBreaks,
}

impl ClassMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Jenks => "jenks",
            Self::Quantile => "quantile",
            Self::EqualInterval => "equal_interval",
            Self::StdDev => "std_dev",
            Self::Pretty => "pretty",
            Self::HeadTailBreaks => "head_tail_breaks",
        }
    }
}

/// A classification of `field`'s values: `output` gets each row's class (0 for the lowest,
/// NULL for a NULL value), `<output>_lower` and `<output>_upper` its bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassifyOp {
    pub field: String,
    pub method: ClassMethod,
    /// Classes asked for (methods that choose their own count ignore it).
    pub classes: u32,
    pub output: String,
    /// A colour per class, from a named scheme, into a text field.
    pub colors: Option<ClassColors>,
}

/// The colours of a classification: one of the scheme's colours per class (as many as there
/// are classes, see [`crate::palettes::colors`]), as `#rrggbb` in `field`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassColors {
    pub scheme: String,
    /// The scheme's colours from the high end down.
    pub reverse: bool,
    pub field: String,
}

impl ClassifyOp {
    /// The columns the operator adds: class, lower bound, upper bound (and the colour's, see
    /// [`ClassifyOp::colors`]).
    pub fn output_columns(&self) -> [String; 3] {
        [
            self.output.clone(),
            format!("{}_lower", self.output),
            format!("{}_upper", self.output),
        ]
    }
}

/// How `normalize` rescales a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NormalizeMethod {
    /// `ln(1 + x)` (NULL for x ≤ −1).
    Log1p,
    /// `(x − min) / (max − min)`: 0 to 1 over the layer (0 when every value is the same).
    Minmax,
    /// `(x − mean) / standard deviation` (population, as `scipy.stats.zscore`).
    Zscore,
}

impl NormalizeMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Log1p => "log1p",
            Self::Minmax => "minmax",
            Self::Zscore => "zscore",
        }
    }
}

/// A per-row value computed from `field`'s values over the whole layer, into `output`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleOp {
    pub field: String,
    pub kind: ScaleKind,
    pub output: String,
}

/// What a [`ScaleOp`] computes.
#[derive(Debug, Clone, PartialEq)]
pub enum ScaleKind {
    /// The value rescaled.
    Normalize(NormalizeMethod),
    /// A class per distinct value, the most frequent first (ties by value); past
    /// `max_classes` − 1 values the rest share a last class labelled `other`. Adds
    /// `<output>_label` (the value as text, or `other`) and optionally a colour.
    Categories {
        max_classes: u32,
        colors: Option<ClassColors>,
    },
    /// A colour interpolated along a scheme between the layer's minimum and maximum.
    ColorRamp { scheme: String, reverse: bool },
    /// A symbol size between `min` and `max`, linear in the value (or in its square root,
    /// so that a symbol's area follows the value).
    SymbolSize { min: f64, max: f64, sqrt: bool },
    /// Two classifications, of `field` and `other`, each in `classes` classes: `<output>`
    /// is `y * classes + x`, `<output>_x` and `<output>_y` the two classes, and `color` the
    /// blend of the two schemes' colours.
    Bivariate {
        other: String,
        method: ClassMethod,
        classes: u32,
        schemes: (String, String),
        color_field: String,
    },
    /// k-means clusters of the features' points (centroids for other geometries): Lloyd's
    /// iterations from `init` when given, else from k-means++ seeded by `seed`.
    KMeans {
        k: u32,
        seed: u64,
        max_iter: u32,
        init: Vec<[f64; 2]>,
    },
    /// DBSCAN clusters of the features' points, `eps` in the layer's units (in metres of
    /// great-circle distance when `geodesic`); −1 for noise.
    Dbscan {
        eps: f64,
        min_samples: u32,
        geodesic: bool,
    },
    /// HDBSCAN clusters of the features' points (excess-of-mass selection); −1 for noise.
    /// `geodesic`: great-circle distances on longitude/latitude.
    Hdbscan {
        min_cluster_size: u32,
        min_samples: u32,
        geodesic: bool,
    },
}

impl ScaleOp {
    fn reads(&self) -> Vec<String> {
        match &self.kind {
            ScaleKind::Bivariate { other, .. } => vec![self.field.clone(), other.clone()],
            _ => vec![self.field.clone()],
        }
    }

    /// The columns the step adds, with their types.
    pub fn outputs(&self) -> Vec<(String, FieldType)> {
        let named = |suffix: &str| format!("{}_{suffix}", self.output);
        match &self.kind {
            ScaleKind::Normalize(_) | ScaleKind::SymbolSize { .. } => {
                vec![(self.output.clone(), FieldType::Double)]
            }
            ScaleKind::KMeans { .. } | ScaleKind::Dbscan { .. } | ScaleKind::Hdbscan { .. } => {
                vec![(self.output.clone(), FieldType::Integer)]
            }
            ScaleKind::ColorRamp { .. } => vec![(self.output.clone(), FieldType::Text)],
            ScaleKind::Categories { colors, .. } => {
                let mut outputs = vec![
                    (self.output.clone(), FieldType::Integer),
                    (named("label"), FieldType::Text),
                ];
                if let Some(colors) = colors {
                    outputs.push((colors.field.clone(), FieldType::Text));
                }
                outputs
            }
            ScaleKind::Bivariate { color_field, .. } => vec![
                (self.output.clone(), FieldType::Integer),
                (named("x"), FieldType::Integer),
                (named("y"), FieldType::Integer),
                (color_field.clone(), FieldType::Text),
            ],
        }
    }

    /// The step in a line (plan text, kernel line).
    pub fn describe(&self) -> String {
        match &self.kind {
            ScaleKind::Normalize(method) => format!("normalize {} {}", self.field, method.as_str()),
            ScaleKind::Categories { max_classes, .. } => {
                format!("categories of {} (at most {max_classes})", self.field)
            }
            ScaleKind::ColorRamp { scheme, reverse } => format!(
                "colour ramp {scheme}{} over {}",
                if *reverse { " reversed" } else { "" },
                self.field
            ),
            ScaleKind::SymbolSize { min, max, sqrt } => format!(
                "symbol size {min}..{max}{} by {}",
                if *sqrt { " (square root)" } else { "" },
                self.field
            ),
            ScaleKind::KMeans { k, seed, init, .. } => format!(
                "k-means of the points, k={k}, {}",
                if init.is_empty() {
                    format!("k-means++ seed {seed}")
                } else {
                    "given initial centres".to_owned()
                }
            ),
            ScaleKind::Dbscan {
                eps,
                min_samples,
                geodesic,
            } => format!(
                "DBSCAN of the points, eps={eps}{}, min_samples={min_samples}",
                if *geodesic { " m" } else { "" }
            ),
            ScaleKind::Hdbscan {
                min_cluster_size,
                min_samples,
                geodesic,
            } => format!(
                "HDBSCAN of the points{}, min_cluster_size={min_cluster_size}, min_samples={min_samples}",
                if *geodesic {
                    " (great-circle distances)"
                } else {
                    ""
                }
            ),
            ScaleKind::Bivariate {
                other,
                method,
                classes,
                schemes,
                ..
            } => format!(
                "bivariate {}x{classes} {} of {} and {other}, colours {} x {}",
                classes,
                method.as_str(),
                self.field,
                schemes.0,
                schemes.1
            ),
        }
    }
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
            Self::Parquet => None,
        }
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
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExportOp {
    pub destination: String,
    pub format: ExportFormat,
}
