//! `cluster_kmeans`: k-means clusters of a layer's points.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{KMeansMethod, Operator, ScaleKind, ScaleOp};
use crate::schema::GEOM;

/// Cluster the features into `k` clusters by k-means (Lloyd's algorithm) on their points, the
/// centroid standing for a line or polygon, in the layer's coordinates: each feature gets the
/// index of its nearest centre in `cluster` (0 to k − 1; equal distances go to the lower
/// index; NULL for a NULL or empty geometry). The centres start at `init` when given (k
/// points `[x, y]`), else at k-means++ picks seeded by `seed` (the same seed, the same
/// clusters); iterations stop when no feature changes cluster or after `max_iter`. With the
/// same initial centres the clusters equal scikit-learn's `KMeans(init=..., n_init=1,
/// algorithm="lloyd")`. `distance` names a field given each point's distance to its centre
/// (CRS units). With `method: scikit_learn` the clusters are scikit-learn's
/// `KMeans(n_clusters=k, random_state=seed, n_init="auto")` step by step (`seed` below
/// 2^32): the points centred on their mean, greedy k-means++ drawn from NumPy's MT19937,
/// Lloyd's iterations stopping when no label changes or the squared centre shift is within
/// 1e-4 of the mean variance, an empty cluster given the farthest point; scikit-learn's
/// distances come from BLAS, so a point equally near two centres may fall either way.
/// `work_crs` clusters in that CRS (distances in its units), the geometry kept. Runs on the
/// native backend whatever the engine.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ClusterKmeans {
    /// How many clusters.
    #[schemars(range(min = 1, max = 10000))]
    pub k: u32,
    /// Seed of the k-means++ initialisation (default 0).
    #[serde(default)]
    pub seed: u64,
    /// Most iterations (default 300, at most 10000).
    #[serde(default = "default_max_iter")]
    #[schemars(range(min = 1, max = 10000))]
    pub max_iter: u32,
    /// Initial centres, `[[x, y], ...]`, k of them (default: k-means++).
    #[serde(default)]
    pub init: Vec<[f64; 2]>,
    /// `lloyd` (default) or `scikit_learn`.
    #[serde(default = "lloyd")]
    pub method: KMeansMethod,
    /// A field for each point's distance to its centre (default: none).
    #[serde(default)]
    pub distance: Option<String>,
    /// The CRS the points are clustered in (`EPSG:code`, or `auto`: see `buffer`; default: the
    /// layer's).
    #[serde(default)]
    pub work_crs: Option<String>,
    /// The cluster field (default `cluster`).
    #[serde(default = "default_output")]
    #[schemars(length(min = 1))]
    pub output: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn lloyd() -> KMeansMethod {
    KMeansMethod::Lloyd
}

fn default_max_iter() -> u32 {
    300
}

pub(super) fn default_output() -> String {
    "cluster".into()
}

impl CapabilityParams for ClusterKmeans {
    const NAME: &'static str = "cluster_kmeans";
    const GROUP: Group = Group::Statistics;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if self.k == 0 {
            return Err(vec![Problem::new(ctx.at("k"), "must be at least 1")]);
        }
        if !self.init.is_empty() && self.init.len() != self.k as usize {
            return Err(vec![Problem::new(
                ctx.at("init"),
                format!("gives {} centres for k = {}", self.init.len(), self.k),
            )]);
        }
        if self.init.iter().flatten().any(|c| !c.is_finite()) {
            return Err(vec![Problem::new(ctx.at("init"), "centres must be finite")]);
        }
        if self.method == KMeansMethod::ScikitLearn {
            if !self.init.is_empty() {
                return Err(vec![Problem::new(
                    ctx.at("init"),
                    "method scikit_learn seeds by k-means++: leave init out",
                )]);
            }
            if u32::try_from(self.seed).is_err() {
                return Err(vec![Problem::new(
                    ctx.at("seed"),
                    "must be below 2^32 with method scikit_learn (NumPy's seeds)",
                )]);
            }
        }
        if self.distance.as_deref() == Some(self.output.as_str()) {
            return Err(vec![Problem::new(ctx.at("distance"), "must differ from output")]);
        }
        super::work_crs::within(
            self.work_crs.as_deref(),
            super::work_crs::Output::Geometry,
            ctx,
            |_| {
                Ok(vec![Operator::owned(ScaleOp {
                    field: GEOM.to_owned(),
                    kind: ScaleKind::KMeans {
                        k: self.k,
                        seed: self.seed,
                        max_iter: self.max_iter.max(1),
                        init: self.init.clone(),
                        method: self.method,
                        distance: self.distance.clone(),
                    },
                    output: self.output.clone(),
                })])
            },
        )
    }
}
