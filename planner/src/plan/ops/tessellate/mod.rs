//! Diagrams made from the layer as a whole: Voronoi cells of the features' sites, Delaunay
//! triangles of their vertices, polygons enclosed by their lines.

mod sql;

use crate::plan::owned::{OwnedOperator, first_input, first_schema};
use crate::schema::{Column, FieldType, GEOM, Schema};
use crate::sql::dialect::Dialect;
use crate::sql::input::Input;

/// A `[xmin, ymin, xmax, ymax]` box in the layer's CRS.
pub type Bounds = [f64; 4];

/// The field numbering the pieces of a layer-wide diagram.
pub const PIECE_ID: &str = "id";

/// A diagram over every feature of the input.
#[derive(Debug, Clone, PartialEq)]
pub enum TessellateOp {
    /// Each feature's geometry replaced by the Voronoi cell of its site (a point is its own
    /// site, another geometry's site is its centroid); attributes kept. The diagram reaches
    /// the sites' bounding box grown by its larger side, and `envelope` when it is larger;
    /// with `clip`, the cells are cut to `envelope` (or to the sites' bounding box).
    Voronoi {
        envelope: Option<Bounds>,
        clip: bool,
    },
    /// The Delaunay triangles (with `edges`, their edges) of every vertex of the layer, one
    /// row each, numbered in `id`; the input's attributes are not kept. Without a tolerance
    /// the triangulation is GEOS 3.12+'s (natively on every engine: GEOS 3.11 misses slivers
    /// along the hull); with one, GEOS 3.11's snapping (PostGIS SQL, or natively).
    Delaunay { edges: bool, tolerance: f64 },
    /// The polygons enclosed by the layer's lines and polygon rings, noded where they cross
    /// (`node`; else as given: lines crossing without a shared vertex do not split a face),
    /// one row each, numbered in `id`; the input's attributes are not kept.
    Polygonize { node: bool },
}

impl TessellateOp {
    /// The output schema over the input's.
    pub fn output_schema(&self, input: &Schema) -> Schema {
        match self {
            Self::Voronoi { .. } => input.clone(),
            Self::Delaunay { .. } | Self::Polygonize { .. } => Schema {
                columns: vec![
                    Column {
                        name: PIECE_ID.to_owned(),
                        ty: FieldType::Integer,
                    },
                    Column {
                        name: GEOM.to_owned(),
                        ty: FieldType::Geometry,
                    },
                ],
                crs: input.crs.clone(),
            },
        }
    }

    /// Why `dialect`'s SQL cannot compute the diagram, if it cannot (it then runs natively).
    pub fn missing_on(&self, dialect: Dialect) -> Option<String> {
        let why = match (self, dialect) {
            (
                Self::Voronoi {
                    envelope: Some(_), ..
                },
                Dialect::Duckdb,
            ) => "DuckDB's ST_VoronoiDiagram takes no envelope to extend the diagram to",
            (Self::Delaunay { .. }, Dialect::Duckdb) => {
                "DuckDB spatial has no Delaunay triangulation"
            }
            (Self::Delaunay { tolerance, .. }, Dialect::Postgis) if *tolerance == 0.0 => {
                "PostGIS 3.3's GEOS 3.11 leaves out slivers along the convex hull (GEOS issue 953)"
            }
            _ => return None,
        };
        Some(format!(
            "{} runs on the native backend: {why}",
            self.describe()
        ))
    }

    /// The operator in EXPLAIN text.
    pub fn describe(&self) -> String {
        match self {
            Self::Voronoi { envelope, clip } => format!(
                "voronoi envelope={} clip={clip}",
                envelope.map_or("none".to_owned(), |b| format!("{b:?}"))
            ),
            Self::Delaunay { edges, tolerance } => {
                format!("delaunay edges={edges} tolerance={tolerance}")
            }
            Self::Polygonize { node: true } => "polygonize".to_owned(),
            Self::Polygonize { node: false } => "polygonize node=false".to_owned(),
        }
    }
}

impl OwnedOperator for TessellateOp {
    fn name(&self) -> &'static str {
        "Tessellate"
    }

    fn explain(&self) -> String {
        self.describe()
    }

    fn reads(&self) -> Vec<String> {
        Vec::new()
    }

    fn output_schema(&self, inputs: &[Option<&Schema>]) -> Option<Schema> {
        Some(TessellateOp::output_schema(self, first_schema(inputs)?))
    }

    fn sql_missing(&self, dialect: Dialect) -> Option<String> {
        self.missing_on(dialect)
    }

    fn sql(
        &self,
        inputs: &[Input<'_>],
        _output: Option<&Schema>,
        dialect: Dialect,
    ) -> Result<String, String> {
        sql::tessellate_sql(self, first_input(inputs, "Tessellate")?, dialect)
    }

    fn native_kernel(&self) -> Result<String, String> {
        Ok(format!(
            "{}: GEOS over every feature's {} at once{}",
            self.describe(),
            match self {
                Self::Voronoi { .. } => "site",
                Self::Delaunay { .. } => "vertices",
                Self::Polygonize { node: true } => "lines and rings, noded by a union",
                Self::Polygonize { node: false } => "lines and rings, as given",
            },
            match self {
                Self::Voronoi { .. } => ", each row given the cell its site lies in",
                _ => ", the pieces numbered by their lower-left corner",
            }
        ))
    }
}
