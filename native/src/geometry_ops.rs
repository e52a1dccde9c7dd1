//! Per-feature geometry kernels (buffer, simplify, the computed columns of a map),
//! rayon-parallel over rows (dissolve is `dissolve.rs`).

use geos::{Geom, Geometry, GeometryTypes};

use super::NativeError;
use super::geos_base::{map_geometry, to_geos, to_wkb};
use super::layer::Layer;
use super::measures::{self, Measure};
use geomill_geometry::geodesic::GeodesicBuffer;
use geomill_planner::plan::operator::GeoExpr;
use geomill_planner::schema::GEOM;

/// Buffers each geometry by `distance`: in CRS units, or with `geodesic` in metres on
/// longitude/latitude ([`GeodesicBuffer`], the definition DuckDB's `geomill_geodesic_buffer`
/// shares).
pub fn buffer(
    layer: &Layer,
    distance: f64,
    geodesic: bool,
    segments: u32,
) -> Result<Layer, NativeError> {
    if !geodesic {
        return map_geometry(layer, |bytes, row| {
            let out = to_geos(bytes, row)?
                .buffer(distance, segments as i32)
                .map_err(NativeError::geos)?;
            to_wkb(&out).map(Some)
        });
    }
    let geodesic = GeodesicBuffer::new(distance, segments).map_err(NativeError::Geos)?;
    map_geometry(layer, |bytes, row| {
        geodesic
            .apply(bytes)
            .map_err(|reason| NativeError::Geometry { row, reason })
    })
}

/// Each invalid geometry made valid by GEOS `MakeValid`, keeping the parts of the input's
/// dimension (as the SQL engines' `ST_CollectionExtract(ST_MakeValid(g), ST_Dimension(g) + 1)`:
/// a collection of them becomes a multi-geometry); valid, empty and NULL geometries untouched.
pub fn make_valid(layer: &Layer) -> Result<Layer, NativeError> {
    map_geometry(layer, |bytes, row| {
        let geometry = to_geos(bytes, row)?;
        if geometry.is_valid() {
            return Ok(Some(bytes.to_vec()));
        }
        let dimension = geometry.get_num_dimensions().map_err(NativeError::geos)?;
        let fixed = geometry.make_valid().map_err(NativeError::geos)?;
        let simple = !matches!(
            fixed.geometry_type(),
            GeometryTypes::MultiPoint
                | GeometryTypes::MultiLineString
                | GeometryTypes::MultiPolygon
                | GeometryTypes::GeometryCollection
        );
        if simple && fixed.get_num_dimensions().map_err(NativeError::geos)? == dimension {
            return to_wkb(&fixed).map(Some);
        }
        let mut parts = Vec::new();
        parts_of_dimension(&fixed, dimension, &mut parts)?;
        let collected = match dimension {
            0 => Geometry::create_multipoint(parts),
            1 => Geometry::create_multiline_string(parts),
            _ => Geometry::create_multipolygon(parts),
        }
        .map_err(NativeError::geos)?;
        to_wkb(&collected).map(Some)
    })
}

/// The simple parts of `geometry` (through nested collections) of `dimension`.
fn parts_of_dimension<G: Geom>(
    geometry: &G,
    dimension: usize,
    parts: &mut Vec<Geometry>,
) -> Result<(), NativeError> {
    match geometry.geometry_type() {
        GeometryTypes::MultiPoint
        | GeometryTypes::MultiLineString
        | GeometryTypes::MultiPolygon
        | GeometryTypes::GeometryCollection => {
            for n in 0..geometry.get_num_geometries().map_err(NativeError::geos)? {
                let part = geometry.get_geometry_n(n).map_err(NativeError::geos)?;
                parts_of_dimension(&part, dimension, parts)?;
            }
        }
        _ => {
            if geometry.get_num_dimensions().map_err(NativeError::geos)? == dimension
                && !geometry.is_empty().map_err(NativeError::geos)?
            {
                parts.push(Geom::clone(geometry));
            }
        }
    }
    Ok(())
}

/// Simplifies each geometry with tolerance `tolerance` (CRS units): GEOS's topology-preserving
/// simplifier, or Douglas-Peucker when `preserve_topology` is false.
pub fn simplify(
    layer: &Layer,
    tolerance: f64,
    preserve_topology: bool,
) -> Result<Layer, NativeError> {
    map_geometry(layer, |bytes, row| {
        let geometry = to_geos(bytes, row)?;
        let out = if preserve_topology {
            geometry.topology_preserve_simplify(tolerance)
        } else {
            geometry.simplify(tolerance)
        }
        .map_err(NativeError::geos)?;
        to_wkb(&out).map(Some)
    })
}

/// One computed column of a map (the native side of `GeoExpr`; a new per-feature kernel is
/// an arm here): a geometry function written over `geom`, or a measure.
pub(crate) fn map_one(layer: &Layer, name: &str, expr: &GeoExpr) -> Result<Layer, NativeError> {
    let geometry_out = !matches!(
        expr,
        GeoExpr::Area { .. } | GeoExpr::Length { .. } | GeoExpr::MeasuredIn { .. }
    );
    if geometry_out && name != GEOM {
        return Err(NativeError::Declined(format!(
            "a geometry written to column {name} (native maps replace {GEOM})"
        )));
    }
    match *expr {
        GeoExpr::Buffer {
            distance,
            geodesic,
            segments,
        } => buffer(layer, distance, geodesic, segments),
        GeoExpr::Simplify {
            tolerance,
            preserve_topology,
        } => simplify(layer, tolerance, preserve_topology),
        GeoExpr::Centroid => measures::centroid(layer),
        GeoExpr::ConvexHull => measures::convex_hull(layer),
        GeoExpr::Area { geodesic, factor } => {
            measures::measure(layer, name, Measure::Area, geodesic, factor)
        }
        GeoExpr::Length { geodesic, factor } => {
            measures::measure(layer, name, Measure::Length, geodesic, factor)
        }
        GeoExpr::Transform { .. } => Err(NativeError::Declined("reprojection".into())),
        // No kernel: these run as SQL on every engine (`GeoExpr::native_kernel` says so).
        GeoExpr::Boundary
        | GeoExpr::Envelope
        | GeoExpr::SwapXy
        | GeoExpr::Reverse { .. }
        | GeoExpr::DropZ
        | GeoExpr::DropM
        | GeoExpr::AddZ { .. }
        | GeoExpr::AddM { .. }
        | GeoExpr::LineMerge { .. }
        | GeoExpr::LineSubstring { .. }
        | GeoExpr::SnapToGrid { .. }
        | GeoExpr::Affine { .. }
        | GeoExpr::ForceMulti
        | GeoExpr::ForceSingle { .. }
        | GeoExpr::OfFamily { .. }
        | GeoExpr::SetCrs { .. }
        | GeoExpr::MeasuredIn { .. } => Err(NativeError::Declined(expr.explain())),
        GeoExpr::Shape(ref shape) => super::shapes::map_shape(layer, shape),
        GeoExpr::MakeValid => make_valid(layer),
    }
}
