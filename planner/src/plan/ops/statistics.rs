//! The operators of spatial statistics: neighbours of each feature (spatial weights), the
//! autocorrelation statistics computed over them, and layers made from a layer as a whole
//! (grids of cells over its extent, a density surface, its neighbours as a table).

use crate::plan::owned::{OwnedOperator, first_schema, with_columns};
use crate::schema::{Column, FieldType, GEOM, Schema};
use crate::sql::dialect::Dialect;

/// Which features neighbour which.
#[derive(Debug, Clone, PartialEq)]
pub enum WeightsKind {
    /// Polygons sharing at least one vertex.
    Queen,
    /// Polygons sharing at least one edge.
    Rook,
    /// The `k` nearest points (centroids of other geometries); `geodesic`: by great-circle
    /// distance on longitude/latitude.
    Knn { k: u32, geodesic: bool },
    /// Points within `distance`; with `power`, weighted by `1 / d^power` (inverse distance).
    Band {
        distance: f64,
        power: Option<f64>,
        /// `distance` in metres on longitude/latitude (great-circle distances).
        geodesic: bool,
    },
}

/// How weights are scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightsTransform {
    /// As built: 1 per neighbour (inverse distance weights for an inverse-distance band).
    Original,
    /// Each row's weights divided by their sum (PySAL's `r`).
    Row,
    /// 1 per neighbour whatever the weights (PySAL's `b`).
    Binary,
}

impl WeightsTransform {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Original => "original",
            Self::Row => "row",
            Self::Binary => "binary",
        }
    }
}

/// The spatial weights a statistic uses.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightsSpec {
    pub kind: WeightsKind,
    pub transform: WeightsTransform,
}

impl WeightsSpec {
    /// The weights in a few words (plan text).
    pub fn describe(&self) -> String {
        let kind = match &self.kind {
            WeightsKind::Queen => "queen contiguity".to_owned(),
            WeightsKind::Rook => "rook contiguity".to_owned(),
            WeightsKind::Knn { k, geodesic } => format!(
                "{k} nearest{}",
                if *geodesic { " by great circle" } else { "" }
            ),
            WeightsKind::Band {
                distance,
                power,
                geodesic,
            } => format!(
                "within {distance}{}{}",
                if *geodesic { " m" } else { "" },
                power
                    .map(|p| format!(" weighted 1/d^{p}"))
                    .unwrap_or_default()
            ),
        };
        format!("{kind}, {}", self.transform.as_str())
    }
}

/// Per-feature values computed over the features' neighbours, added as columns.
#[derive(Debug, Clone, PartialEq)]
pub struct StatisticOp {
    /// The numeric field analysed (`None` for a neighbour count).
    pub field: Option<String>,
    pub weights: WeightsSpec,
    pub kind: StatisticKind,
    /// The added columns' name, or their common prefix.
    pub output: String,
}

/// What a [`StatisticOp`] computes.
#[derive(Debug, Clone, PartialEq)]
pub enum StatisticKind {
    /// Each feature's number of neighbours (0: an island).
    NeighbourCount,
    /// Global Moran's I and local Moran (LISA) per feature.
    Moran { permutations: u32, seed: u64 },
    /// Global Getis-Ord G and local Gi (Gi* with `star`) per feature, the local statistic on
    /// row-standardised weights, or on binary ones with `binary_local`.
    GetisOrd {
        star: bool,
        binary_local: bool,
        permutations: u32,
        seed: u64,
    },
}

impl StatisticOp {
    /// The columns the step adds, with their types.
    pub fn outputs(&self) -> Vec<(String, FieldType)> {
        let named = |suffix: &str, ty| (format!("{}_{suffix}", self.output), ty);
        let global = |names: &[&str]| -> Vec<(String, FieldType)> {
            names
                .iter()
                .map(|n| named(&format!("global_{n}"), FieldType::Double))
                .collect()
        };
        match &self.kind {
            StatisticKind::NeighbourCount => vec![(self.output.clone(), FieldType::Integer)],
            StatisticKind::Moran { .. } => {
                let mut columns = vec![
                    named("i", FieldType::Double),
                    named("quadrant", FieldType::Text),
                    named("p_sim", FieldType::Double),
                ];
                columns.extend(global(&[
                    "i", "expected", "variance", "z", "p_norm", "p_sim",
                ]));
                columns
            }
            StatisticKind::GetisOrd { .. } => {
                let mut columns = vec![
                    named("g", FieldType::Double),
                    named("z", FieldType::Double),
                    named("p_norm", FieldType::Double),
                    named("p_sim", FieldType::Double),
                ];
                columns.extend(global(&[
                    "g", "expected", "variance", "z", "p_norm", "p_sim",
                ]));
                columns
            }
        }
    }

    /// The step in a line (plan text, kernel line).
    pub fn describe(&self) -> String {
        let field = self.field.as_deref().unwrap_or(GEOM);
        let weights = self.weights.describe();
        match &self.kind {
            StatisticKind::NeighbourCount => format!("neighbour count ({weights})"),
            StatisticKind::Moran { permutations, seed } => {
                format!("Moran's I of {field} ({weights}), {permutations} permutations seed {seed}")
            }
            StatisticKind::GetisOrd {
                star,
                binary_local,
                permutations,
                seed,
            } => format!(
                "Getis-Ord {} of {field} ({weights}{}), {permutations} permutations seed {seed}",
                if *star { "Gi*" } else { "Gi" },
                if *binary_local {
                    ", local on binary weights"
                } else {
                    ""
                }
            ),
        }
    }
}

/// The shape of a grid's cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridShape {
    /// Squares of side `size`, cell (i, j) spanning `[i·size, (i+1)·size]` × `[j·size,
    /// (j+1)·size]`: PostGIS's `ST_SquareGrid`.
    Square,
    /// Flat-topped hexagons of edge `size`, cell (i, j) centred at `(1.5·i·size,
    /// h·(2j + |i mod 2|))` with `h = size·√3/2`: PostGIS's `ST_HexagonGrid`.
    Hexagon,
}

/// Where a grid lies.
#[derive(Debug, Clone, PartialEq)]
pub struct GridSpec {
    pub shape: GridShape,
    /// Cell size (square side, hexagon edge), in CRS units, or in metres when `geodesic`.
    pub size: f64,
    /// `size` in metres on longitude/latitude: the grid is laid in a local azimuthal
    /// equidistant frame around the extent's centre, its vertices carried back to lon/lat.
    pub geodesic: bool,
    /// The extent covered (`[xmin, ymin, xmax, ymax]` in the layer's CRS); `None`: the input
    /// layer's extent.
    pub bbox: Option<[f64; 4]>,
    /// Where the lattice of square cells lies.
    pub anchor: GridAnchor,
}

/// Where a square grid's lattice lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridAnchor {
    /// Cell (i, j) at multiples of the size, every cell meeting the extent (PostGIS's grids).
    Multiples,
    /// Cell (0, 0) at the extent's lower-left corner; along each axis as many cells as
    /// numpy's `arange(min, max, size)` has values, at those values (GISPulse's grids).
    Extent,
    /// Hexagons in GISPulse's rows, which overlap (see `hexgrid_create`'s `layout`).
    OffsetRows,
    /// A density's nodes as GISPulse samples them (see `kde_heatmap`'s `sample`): points at
    /// numpy's `arange(min − h, max + h + size, size)` along each axis, h the bandwidth.
    PaddedNodes,
}

/// The kernel of a density estimate; each integrates to 1 over the plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DensityKernel {
    /// `3/π (1 − u²)²` within the bandwidth (QGIS's heatmap default).
    Quartic,
    /// `1/(2π) e^(−u²/2)`, the bandwidth its standard deviation.
    Gaussian,
    /// `2/π (1 − u²)` within the bandwidth.
    Epanechnikov,
    /// `1/π` within the bandwidth (a disc).
    Tophat,
}

impl DensityKernel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Quartic => "quartic",
            Self::Gaussian => "gaussian",
            Self::Epanechnikov => "epanechnikov",
            Self::Tophat => "tophat",
        }
    }
}

/// A new layer made from the input layer as a whole; the input's rows are not kept.
#[derive(Debug, Clone, PartialEq)]
pub enum GenerateOp {
    /// The cells of a grid over the extent (with `touching`, only those meeting a feature).
    Grid { grid: GridSpec, touching: bool },
    /// A kernel density of the points on a square grid: `density` per cell (points, or the sum
    /// of `weight`, per square unit: square metres when the grid is geodesic).
    Density {
        grid: GridSpec,
        kernel: DensityKernel,
        /// Bandwidth, in the grid's units.
        bandwidth: f64,
        weight: Option<String>,
        /// Keep cells whose density is 0.
        keep_empty: bool,
        /// Divided by the points' total weight (scikit-learn's `KernelDensity`): a density
        /// that integrates to 1.
        normalize: bool,
    },
    /// One row per (feature, neighbour) pair, and one per island with no neighbour.
    Neighbours {
        weights: WeightsSpec,
        /// A field whose values name the features in `focal_id` / `neighbor_id`.
        id_field: Option<String>,
    },
}

impl GenerateOp {
    /// The input columns the operator names.
    pub fn reads(&self) -> Vec<String> {
        match self {
            Self::Grid { .. } => Vec::new(),
            Self::Density { weight, .. } => weight.iter().cloned().collect(),
            Self::Neighbours { id_field, .. } => id_field.iter().cloned().collect(),
        }
    }

    /// The layer's columns, with their types.
    pub fn columns(&self) -> Vec<(String, FieldType)> {
        let cell = || {
            vec![
                ("cell_id".to_owned(), FieldType::Integer),
                ("i".to_owned(), FieldType::Integer),
                ("j".to_owned(), FieldType::Integer),
                (GEOM.to_owned(), FieldType::Geometry),
            ]
        };
        match self {
            Self::Grid { .. } => cell(),
            Self::Density { .. } => {
                let mut columns = cell();
                columns.push(("density".to_owned(), FieldType::Double));
                columns
            }
            Self::Neighbours { id_field, .. } => {
                let mut columns = vec![
                    ("focal".to_owned(), FieldType::Integer),
                    ("neighbor".to_owned(), FieldType::Integer),
                    ("weight".to_owned(), FieldType::Double),
                ];
                if id_field.is_some() {
                    columns.push(("focal_id".to_owned(), FieldType::Text));
                    columns.push(("neighbor_id".to_owned(), FieldType::Text));
                }
                columns.push((GEOM.to_owned(), FieldType::Geometry));
                columns
            }
        }
    }

    /// The step in a line (plan text, kernel line).
    pub fn describe(&self) -> String {
        let grid = |g: &GridSpec| {
            format!(
                "{} grid of {}{}{}{}",
                match g.shape {
                    GridShape::Square => "square",
                    GridShape::Hexagon => "hexagon",
                },
                g.size,
                if g.geodesic { " m" } else { "" },
                g.bbox
                    .map(|b| format!(" over [{}, {}, {}, {}]", b[0], b[1], b[2], b[3]))
                    .unwrap_or_else(|| " over the layer's extent".to_owned()),
                match g.anchor {
                    GridAnchor::Multiples => "",
                    GridAnchor::Extent => " from its lower-left corner",
                    GridAnchor::OffsetRows => " in offset rows from its lower-left corner",
                    GridAnchor::PaddedNodes =>
                        ", sampled at its nodes from a bandwidth beyond the extent",
                }
            )
        };
        match self {
            Self::Grid { grid: g, touching } => format!(
                "{}{}",
                grid(g),
                if *touching {
                    ", cells touching a feature"
                } else {
                    ""
                }
            ),
            Self::Density {
                grid: g,
                kernel,
                bandwidth,
                weight,
                normalize,
                ..
            } => format!(
                "{}{} kernel density, bandwidth {bandwidth}{}{}, on a {}",
                if *normalize { "normalised " } else { "" },
                kernel.as_str(),
                if g.geodesic { " m" } else { "" },
                weight
                    .as_ref()
                    .map(|w| format!(", weighted by {w}"))
                    .unwrap_or_default(),
                grid(g)
            ),
            Self::Neighbours { weights, .. } => {
                format!("neighbours table ({})", weights.describe())
            }
        }
    }
}

impl OwnedOperator for StatisticOp {
    fn name(&self) -> &'static str {
        "Statistic"
    }

    fn explain(&self) -> String {
        format!("{} output={}", self.describe(), self.output)
    }

    fn reads(&self) -> Vec<String> {
        self.field.iter().cloned().collect()
    }

    fn output_schema(&self, inputs: &[Option<&Schema>]) -> Option<Schema> {
        with_columns(inputs, self.outputs())
    }

    fn native_only(&self) -> bool {
        true
    }

    fn sql_missing(&self, _dialect: Dialect) -> Option<String> {
        Some(format!(
            "{} runs on the native backend: it needs every feature's neighbours",
            self.describe()
        ))
    }

    fn native_kernel(&self) -> Result<String, String> {
        Ok(format!(
            "{}: neighbours found through a grid index (contiguity: shared vertices hashed), statistics over every feature, permutations in parallel",
            self.describe()
        ))
    }
}

impl OwnedOperator for GenerateOp {
    fn name(&self) -> &'static str {
        "Generate"
    }

    fn explain(&self) -> String {
        self.describe()
    }

    fn reads(&self) -> Vec<String> {
        GenerateOp::reads(self)
    }

    fn output_schema(&self, inputs: &[Option<&Schema>]) -> Option<Schema> {
        Some(Schema {
            columns: self
                .columns()
                .into_iter()
                .map(|(name, ty)| Column { name, ty })
                .collect(),
            crs: first_schema(inputs)?.crs.clone(),
        })
    }

    fn native_only(&self) -> bool {
        true
    }

    fn sql_missing(&self, _dialect: Dialect) -> Option<String> {
        Some(format!(
            "the {} runs on the native backend: it is made from the whole layer",
            self.describe()
        ))
    }

    fn native_kernel(&self) -> Result<String, String> {
        Ok(format!(
            "{}: {}",
            self.describe(),
            match self {
                Self::Grid { .. } =>
                    "cells enumerated over the extent, tested against an R-tree of the features when only touching cells are kept",
                Self::Density { .. } =>
                    "points binned in a grid of the kernel's reach, each cell's density summed over the points in reach, cells in parallel",
                Self::Neighbours { .. } =>
                    "neighbours found through a grid index (contiguity: shared vertices hashed), one row per pair",
            }
        ))
    }
}
