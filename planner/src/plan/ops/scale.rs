//! The operators of classification and of per-row values computed over the whole layer:
//! class breaks (`Classify`) and rescaled values, categories, colours, symbol sizes, bivariate
//! classes and clusters (`Scale`).

use serde::{Deserialize, Serialize};

use crate::plan::owned::{OwnedOperator, with_columns};
use crate::schema::{FieldType, Schema};
use crate::sql::dialect::Dialect;

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
    /// Classes of equal counts as pandas' `qcut` cuts them (GISPulse's quantiles): the
    /// percentiles of `quantile`, but the minimum is the lowest class's lower edge, so when the
    /// lowest percentiles equal the minimum it does not make a class of its own (many equal
    /// low values, zeros say, then give fewer classes than `quantile`).
    Qcut,
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
    /// Head/tail breaks as GISPulse computes them: the mean, then the mean of the values above
    /// it, and so on while the values above the last mean are at most 40 % of those it was
    /// taken over, at most `classes` means; the maximum closes the last class.
    HeadTailRatio,
}

impl ClassMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Jenks => "jenks",
            Self::Quantile => "quantile",
            Self::Qcut => "qcut",
            Self::EqualInterval => "equal_interval",
            Self::StdDev => "std_dev",
            Self::Pretty => "pretty",
            Self::HeadTailBreaks => "head_tail_breaks",
            Self::HeadTailRatio => "head_tail_ratio",
        }
    }
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

/// How `normalize` rescales a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NormalizeMethod {
    /// `ln(1 + x)` (NULL for x ≤ −1).
    Log1p,
    /// `ln(x)` (NULL for x ≤ 0).
    Log,
    /// `(x − min) / (max − min)`: 0 to 1 over the layer (`equal_value`, default 0, when every
    /// value is the same).
    Minmax,
    /// `(x − mean) / standard deviation` (population, as `scipy.stats.zscore`).
    Zscore,
    /// `(rank − 1) / (n − 1)`, ties given their average rank (pandas' `rank`): 0 to 1 (1 when
    /// there is one value).
    Rank,
    /// `100 · x / Σx` (0 everywhere when the sum is 0).
    Percent,
}

impl NormalizeMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Log1p => "log1p",
            Self::Log => "log",
            Self::Minmax => "minmax",
            Self::Zscore => "zscore",
            Self::Rank => "rank",
            Self::Percent => "percent",
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
    /// The value rescaled; `equal_value` is `minmax`'s value when every value is the same.
    Normalize {
        method: NormalizeMethod,
        equal_value: f64,
    },
    /// A class per distinct value, the most frequent first (ties by value, or as first seen); past
    /// `max_classes` − 1 values the rest share a last class labelled `other`. Adds
    /// `<output>_label` (the value as text, or `other`) and optionally a colour.
    Categories {
        max_classes: u32,
        colors: Option<ClassColors>,
        /// Equal counts in the order the values first appear (pandas' `value_counts`), not
        /// by value.
        first_seen: bool,
    },
    /// A colour interpolated along a scheme (or a list of stops) by the value's position
    /// between the domain's ends.
    ColorRamp {
        colors: RampColors,
        position: RampPosition,
    },
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
    /// iterations from `init` when given, else from k-means++ seeded by `seed`; or as
    /// `method` says. `distance`: a field given each point's distance to its centre.
    KMeans {
        k: u32,
        seed: u64,
        max_iter: u32,
        init: Vec<[f64; 2]>,
        method: KMeansMethod,
        distance: Option<String>,
    },
    /// DBSCAN clusters of the features' points, `eps` in the layer's units (in metres of
    /// great-circle distance when `geodesic`); −1 for noise. With `time`, two points are
    /// neighbours only when their times are near too (ST-DBSCAN).
    Dbscan {
        eps: f64,
        min_samples: u32,
        geodesic: bool,
        time: Option<TimeGate>,
    },
    /// HDBSCAN clusters of the features' points (excess-of-mass selection); −1 for noise.
    /// `geodesic`: great-circle distances on longitude/latitude.
    Hdbscan {
        min_cluster_size: u32,
        min_samples: u32,
        geodesic: bool,
        /// A field given each point's membership probability (scikit-learn's
        /// `probabilities_`; 0 for noise).
        probability: Option<String>,
    },
}

/// How `cluster_kmeans` seeds and stops.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum KMeansMethod {
    /// k-means++ seeded by SplitMix64, Lloyd's iterations until no point changes cluster.
    Lloyd,
    /// scikit-learn's `KMeans(random_state=seed, n_init="auto")`: greedy k-means++ from
    /// NumPy's MT19937, centred points, its tolerance and empty-cluster rules.
    ScikitLearn,
}

/// The colours of a [`ScaleKind::ColorRamp`].
#[derive(Debug, Clone, PartialEq)]
pub enum RampColors {
    /// A named scheme (`palettes::at`), optionally run from its other end.
    Scheme { name: String, reverse: bool },
    /// Colours (`0xRRGGBB`) interpolated as GISPulse does (`palettes::gispulse::along`).
    Stops(Vec<u32>),
}

/// How a value becomes a position from 0 to 1 along a ramp.
#[derive(Debug, Clone, PartialEq)]
pub struct RampPosition {
    /// The values at 0 and 1; `None`: the layer's minimum and maximum.
    pub domain: Option<[f64; 2]>,
    pub scale: RampScale,
    /// The position of every value when the domain's ends are equal.
    pub equal: f64,
}

/// The scale values are positioned on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RampScale {
    Linear,
    /// Natural logarithms; values (or a lower end) of 0 or less have no colour.
    Log,
    /// Square roots; negative values (or a negative lower end) have no colour.
    Sqrt,
}

impl RampScale {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Linear => "linear",
            Self::Log => "log",
            Self::Sqrt => "sqrt",
        }
    }
}

/// ST-DBSCAN's time condition: neighbours' `field` values (timestamps, dates or ISO 8601
/// text) at most `max_seconds` apart; a feature without a time has no neighbour but itself.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeGate {
    pub field: String,
    pub max_seconds: f64,
}

impl ScaleOp {
    pub(crate) fn reads(&self) -> Vec<String> {
        match &self.kind {
            ScaleKind::Bivariate { other, .. } => vec![self.field.clone(), other.clone()],
            ScaleKind::Dbscan {
                time: Some(gate), ..
            } => vec![self.field.clone(), gate.field.clone()],
            _ => vec![self.field.clone()],
        }
    }

    /// The columns the step adds, with their types.
    pub fn outputs(&self) -> Vec<(String, FieldType)> {
        let named = |suffix: &str| format!("{}_{suffix}", self.output);
        match &self.kind {
            ScaleKind::Normalize { .. } | ScaleKind::SymbolSize { .. } => {
                vec![(self.output.clone(), FieldType::Double)]
            }
            ScaleKind::Hdbscan {
                probability: Some(extra),
                ..
            }
            | ScaleKind::KMeans {
                distance: Some(extra),
                ..
            } => vec![
                (self.output.clone(), FieldType::Integer),
                (extra.clone(), FieldType::Double),
            ],
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
            ScaleKind::Normalize {
                method,
                equal_value,
            } => {
                let mut text = format!("normalize {} {}", self.field, method.as_str());
                if *method == NormalizeMethod::Minmax && *equal_value != 0.0 {
                    text.push_str(&format!(" equal_value={equal_value}"));
                }
                text
            }
            ScaleKind::Categories {
                max_classes,
                first_seen,
                ..
            } => format!(
                "categories of {} (at most {max_classes}{})",
                self.field,
                if *first_seen { ", ties first seen" } else { "" }
            ),
            ScaleKind::ColorRamp { colors, position } => {
                let along = match colors {
                    RampColors::Scheme { name, reverse } => {
                        format!("{name}{}", if *reverse { " reversed" } else { "" })
                    }
                    RampColors::Stops(stops) => format!("{} stops", stops.len()),
                };
                let mut text = format!("colour ramp {along} over {}", self.field);
                if let Some([low, high]) = position.domain {
                    text.push_str(&format!(" domain=[{low}, {high}]"));
                }
                if position.scale != RampScale::Linear {
                    text.push_str(&format!(" scale={}", position.scale.as_str()));
                }
                if position.equal != 0.0 {
                    text.push_str(&format!(" equal_position={}", position.equal));
                }
                text
            }
            ScaleKind::SymbolSize { min, max, sqrt } => format!(
                "symbol size {min}..{max}{} by {}",
                if *sqrt { " (square root)" } else { "" },
                self.field
            ),
            ScaleKind::KMeans {
                k,
                seed,
                init,
                method,
                ..
            } => format!(
                "k-means of the points, k={k}, {}",
                if *method == KMeansMethod::ScikitLearn {
                    format!("as scikit-learn with random_state {seed}")
                } else if init.is_empty() {
                    format!("k-means++ seed {seed}")
                } else {
                    "given initial centres".to_owned()
                }
            ),
            ScaleKind::Dbscan {
                eps,
                min_samples,
                geodesic,
                time,
            } => format!(
                "DBSCAN of the points, eps={eps}{}, min_samples={min_samples}{}",
                if *geodesic { " m" } else { "" },
                time.as_ref().map_or_else(String::new, |t| format!(
                    ", times in {} within {} s",
                    t.field, t.max_seconds
                ))
            ),
            ScaleKind::Hdbscan {
                min_cluster_size,
                min_samples,
                geodesic,
                ..
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

impl OwnedOperator for ScaleOp {
    fn name(&self) -> &'static str {
        "Scale"
    }

    fn explain(&self) -> String {
        format!("{} output={}", self.describe(), self.output)
    }

    fn reads(&self) -> Vec<String> {
        ScaleOp::reads(self)
    }

    fn output_schema(&self, inputs: &[Option<&Schema>]) -> Option<Schema> {
        with_columns(inputs, self.outputs())
    }

    fn native_only(&self) -> bool {
        true
    }

    fn sql_missing(&self, _dialect: Dialect) -> Option<String> {
        Some(format!(
            "{} runs on the native backend: it needs the whole layer's values",
            self.describe()
        ))
    }

    fn native_kernel(&self) -> Result<String, String> {
        Ok(format!(
            "{}: the field's values over every row, then each row's value",
            self.describe()
        ))
    }
}
