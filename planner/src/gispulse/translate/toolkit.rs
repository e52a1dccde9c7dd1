//! GISPulse's geometry toolkit names (grid snapping, densifying, parts and holes, dimensions,
//! affine transforms, projection) onto the native steps of the same names, with GISPulse's
//! defaults: 0-based numbering, NULL and empty rows left out where GeoPandas leaves them out,
//! and 2-D output where Shapely drops Z and M.

use serde_json::{Map, Value, json};

use super::geometry::{Groups, whole_layer_first, work_crs};
use super::{Args, Emitted, Scope, Translator, params};
use crate::gispulse::document::Form;
use crate::sql::quote::ident;

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "snap_to_grid" => snap_to_grid,
        "densify_vertices" => densify_vertices,
        "extract_holes" => extract_holes,
        "multipart_to_singleparts" => multipart_to_singleparts,
        "singleparts_to_multipart" => singleparts_to_multipart,
        "oriented_bbox" => oriented_bbox,
        "min_bounding_circle" => min_bounding_circle,
        "assign_projection" => assign_projection,
        "swap_xy" => swap_xy,
        "drop_z" => drop_z,
        "drop_m" => drop_m,
        "add_z" => add_z,
        "add_m" => add_m,
        "affine_transform" => affine_transform,
        "reverse_lines" => reverse_lines,
        "line_substring" => line_substring,
        "extract_vertices" => extract_vertices,
        "extract_segments" => extract_segments,
        "force_geometry_type" => force_geometry_type,
        "alpha_shape" => alpha_shape,
        _ => return None,
    })
}

/// A native column name the translation uses for a moment (dropped before the step ends).
const SCRATCH: &str = "__geomill_gispulse_index";

/// `grid_size` in the layer's CRS units (GISPulse's `crs_meters` defaults to none here); in
/// pipelines GISPulse measures lon/lat data in a UTM zone of its choosing.
fn snap_to_grid(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let Some(size) = args.f64("grid_size") else {
        args.problem("grid_size", "is required");
        return;
    };
    if size <= 0.0 {
        args.problem("grid_size", "must be greater than 0");
        return;
    }
    let mut native = params([("size", json!(size)), ("on_invalid", json!("error"))]);
    if args.has("crs_meters") {
        native.insert("work_crs".into(), work_crs(args, scope));
    } else if scope.form == Form::PipelineV2 {
        native.insert("work_crs".into(), json!("auto:angular"));
    }
    out.main("snap_to_grid", native);
}

fn densify_vertices(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    if args.has("n_vertices_per_segment") {
        args.value("n_vertices_per_segment");
        args.problem(
            "n_vertices_per_segment",
            "a vertex count per segment is not supported yet (max_distance is)",
        );
        return;
    }
    let Some(max_distance) = args.f64("max_distance") else {
        args.problem("max_distance", "is required (or n_vertices_per_segment)");
        return;
    };
    let mut native = params([("max_length", json!(max_distance)), ("unit", json!("crs"))]);
    native.insert("work_crs".into(), work_crs(args, scope));
    out.main("densify_vertices", native);
}

/// One polygon per hole, numbered from 0 per feature in `hole_index_col`; features without
/// holes give no row.
fn extract_holes(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let column = args
        .string("hole_index_col")
        .unwrap_or_else(|| "hole_index".into());
    if args.has("parent_id_col") {
        args.value("parent_id_col");
        args.problem(
            "parent_id_col",
            "the parent's row label is not supported yet",
        );
    }
    out.main("extract_holes", params([("index_field", json!(SCRATCH))]));
    numbered_from_zero(out, &column);
}

/// Keeps the rows the native step numbered in [`SCRATCH`] and numbers them from 0 in `column`.
fn numbered_from_zero(out: &mut Emitted, column: &str) {
    let scratch = ident(SCRATCH);
    out.main(
        "filter",
        params([("where", json!(format!("{scratch} IS NOT NULL")))]),
    );
    out.main(
        "calculate",
        params([("expressions", json!({column: format!("{scratch} - 1")}))]),
    );
    out.main("drop_field", params([("fields", json!([SCRATCH]))]));
}

/// A second scratch column, for a numbering over the whole layer.
const SCRATCH_LAYER: &str = "__geomill_gispulse_layer_index";

/// One 2-D point per coordinate, numbered from 0 per feature (`vertex_index`) and over the
/// layer (`global_index`); NULL and empty rows give none.
fn extract_vertices(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    out.main(
        "filter",
        params([("where", json!("geom IS NOT NULL AND NOT ST_IsEmpty(geom)"))]),
    );
    out.main(
        "extract_vertices",
        params([
            ("index_field", json!(SCRATCH)),
            ("layer_index_field", json!(SCRATCH_LAYER)),
        ]),
    );
    let (vertex, layer) = (ident(SCRATCH), ident(SCRATCH_LAYER));
    out.main(
        "calculate",
        params([(
            "expressions",
            json!({
                "vertex_index": format!("{vertex} - 1"),
                "global_index": format!("{layer} - 1"),
            }),
        )]),
    );
    out.main(
        "drop_field",
        params([("fields", json!([SCRATCH, SCRATCH_LAYER]))]),
    );
    only_new_columns(args, out, &["vertex_index", "global_index"]);
    two_d(out);
}

/// Consecutive coordinate pairs of each feature's coordinates read as one chain (across parts
/// and rings), numbered from 0 in `segment_index`, measured in `crs_meters` (the layer's own
/// units when null) into `length`.
fn extract_segments(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    out.main(
        "extract_segments",
        params([
            ("index_field", json!(SCRATCH)),
            ("across_parts", json!(true)),
        ]),
    );
    numbered_from_zero(out, "segment_index");
    let mut measure = params([
        ("field_length", json!("length")),
        ("length_unit", json!("crs")),
    ]);
    if args.is_null("crs_meters") {
        args.note("measures length in the layer's own units (GISPulse's crs_meters: null)");
    } else {
        measure.insert("work_crs".into(), work_crs(args, scope));
    }
    out.main("area_length", measure);
    only_new_columns(args, out, &["segment_index", "length"]);
}

/// One target type: GISPulse's Multi* targets wrap single geometries, its single ones take
/// Multi* apart (`on_multi`); geometries of another family fail the step (`on_invalid:
/// raise`) or are dropped with the NULL and empty ones (`drop`).
fn force_geometry_type(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let Some(target) = args.string("target") else {
        args.problem("target", "is required");
        return;
    };
    let (multi, single) = match target.strip_prefix("Multi") {
        Some(single) => (true, single.to_owned()),
        None => (false, target.clone()),
    };
    let family = match single.as_str() {
        "Point" => "point",
        "LineString" => "line",
        "Polygon" => "polygon",
        "GeometryCollection" if !multi => {
            args.problem(
                "target",
                "GeometryCollection (every geometry wrapped in a collection) is not supported yet",
            );
            return;
        }
        _ => {
            args.problem(
                "target",
                format!("{target:?} is not a geometry type GISPulse converts to"),
            );
            return;
        }
    };
    let others = match args.string("on_invalid").as_deref() {
        None | Some("raise") => "error",
        Some("drop") => "drop",
        Some("skip") => {
            args.problem(
                "on_invalid",
                "leaving other geometry types as they are (skip) is not supported yet",
            );
            return;
        }
        Some(other) => {
            args.problem(
                "on_invalid",
                format!("{other:?} is not raise, drop or skip"),
            );
            return;
        }
    };
    let mut native = params([
        ("type", json!(if multi { "multi" } else { "single" })),
        ("family", json!(family)),
        ("others", json!(others)),
    ]);
    match args.string("on_multi").as_deref() {
        None | Some("explode") if !multi => {
            native.insert("parts".into(), json!("explode"));
        }
        Some("first") if !multi => {
            native.insert("parts".into(), json!("first"));
        }
        None | Some("explode" | "first") => {}
        Some(other) => {
            args.problem("on_multi", format!("{other:?} is not explode or first"));
            return;
        }
    }
    if multi && others == "error" {
        args.note("a NULL geometry stays NULL (GISPulse writes an empty Multi* for it)");
    }
    out.main("force_geometry_type", native);
}

/// One shape per `by_group` group (or for the whole layer), from every vertex of its
/// geometries: the small Delaunay triangles (circumradius below 1 / `alpha`) wherever they
/// lie, a new layer of the group field and the shape, sorted by group.
fn alpha_shape(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let alpha = args.f64("alpha").unwrap_or(0.05);
    if !(alpha > 0.0 && alpha.is_finite()) {
        args.problem("alpha", "must be greater than 0");
        return;
    }
    let group = args.string("by_group");
    out.keep_not_null(group.as_slice());
    out.main(
        "extract_vertices",
        params([("index_field", json!(SCRATCH))]),
    );
    out.keep_not_null(&[SCRATCH.to_owned()]);
    out.main(
        "singleparts_to_multipart",
        params([("fields", json!(group.as_slice()))]),
    );
    out.main(
        "alpha_shape",
        params([("alpha", json!(1.0 / alpha)), ("shape", json!("triangles"))]),
    );
    out.sort_ascending(group.as_slice());
}

/// GISPulse's `keep_attrs: false`: only `columns` (and the geometry) are kept.
fn only_new_columns(args: &mut Args<'_>, out: &mut Emitted, columns: &[&str]) {
    if args.bool("keep_attrs") == Some(false) {
        out.main("select_columns", params([("fields", json!(columns))]));
    }
}

/// GeoPandas' `explode`: one row per part, NULL rows left out, empty ones too unless
/// `drop_empty` is false (then native keeps them as NULL rows).
fn multipart_to_singleparts(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    args.value("reset_index");
    let condition = if args.bool("drop_empty").unwrap_or(true) {
        "geom IS NOT NULL AND NOT ST_IsEmpty(geom)"
    } else {
        "geom IS NOT NULL"
    };
    out.main("filter", params([("where", json!(condition))]));
    out.main(
        "multipart_to_singleparts",
        params([("index_field", json!(SCRATCH))]),
    );
    out.main("drop_field", params([("fields", json!([SCRATCH]))]));
}

fn oriented_bbox(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    whole_layer_first(args, out, Groups::None);
    out.main("oriented_bbox", Map::new());
}

/// Shapely's circle: GEOS's buffer of the centre, 8 vertices a quarter on the circle.
fn min_bounding_circle(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    whole_layer_first(args, out, Groups::None);
    out.main(
        "min_bounding_circle",
        params([("segments", json!(8)), ("on_circle", json!(true))]),
    );
}

fn assign_projection(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let Some(crs) = args.string("crs") else {
        args.problem("crs", "is required");
        return;
    };
    if args.bool("allow_override") == Some(false) {
        args.problem(
            "allow_override",
            "false (refusing a layer that already has another CRS) is not supported yet",
        );
    }
    out.main(
        "assign_projection",
        params([("crs", json!(crs.replacen("epsg:", "EPSG:", 1)))]),
    );
}

/// Shapely's output of these is 2-D: Z and M are dropped.
fn two_d(out: &mut Emitted) {
    out.main("drop_z", Map::new());
    out.main("drop_m", Map::new());
}

fn swap_xy(_: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    out.main("swap_xy", Map::new());
    two_d(out);
}

fn drop_z(_: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    two_d(out);
}

fn drop_m(_: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    out.main("drop_m", Map::new());
}

/// Only lines are reversed; `ignore_non_lines: false` (an error on anything else) is refused.
fn reverse_lines(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    if args.bool("ignore_non_lines") == Some(false) {
        args.problem(
            "ignore_non_lines",
            "false (failing on the first non-line) is not supported yet",
        );
    }
    out.main("reverse_lines", params([("lines_only", json!(true))]));
}

/// Shapely's `substring` of each LineString between two fractions of its length (beyond the end
/// clamped); everything else is left as it is.
fn line_substring(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    if args.bool("normalized") == Some(false) {
        args.problem(
            "normalized",
            "measures in CRS units (normalized: false) are not supported yet",
        );
        return;
    }
    let start = args.f64("start_measure").unwrap_or(0.0);
    let end = args.f64("end_measure").unwrap_or(1.0);
    if end <= start {
        args.problem("end_measure", "must be greater than start_measure");
        return;
    }
    if start < 0.0 {
        args.problem(
            "start_measure",
            "measures from the end (negative) are not supported yet",
        );
        return;
    }
    out.main(
        "line_substring",
        params([
            ("start", json!(start.min(1.0))),
            ("end", json!(end.min(1.0))),
            ("keep_others", json!(true)),
        ]),
    );
}

/// A constant Z or M for every vertex without one (`from_column` is not supported yet).
fn add_dimension(args: &mut Args<'_>, out: &mut Emitted, key: &str, capability: &str) {
    if args.has("from_column") {
        args.value("from_column");
        args.problem("from_column", "values from a column are not supported yet");
        return;
    }
    let Some(value) = args.f64(key) else {
        args.problem(key, "is required (or from_column)");
        return;
    };
    out.main(capability, params([("value", json!(value))]));
}

fn add_z(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    add_dimension(args, out, "z", "add_z");
}

fn add_m(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    add_dimension(args, out, "m", "add_m");
}

/// A 2-D affine map `[a, b, xoff, d, e, yoff]`: x' = a x + b y + xoff, y' = d x + e y + yoff.
type Affine = [f64; 6];

/// `second` after `first`.
fn then(first: Affine, second: Affine) -> Affine {
    let [a1, b1, x1, d1, e1, y1] = first;
    let [a2, b2, x2, d2, e2, y2] = second;
    [
        a2 * a1 + b2 * d1,
        a2 * b1 + b2 * e1,
        a2 * x1 + b2 * y1 + x2,
        d2 * a1 + e2 * d1,
        d2 * b1 + e2 * e1,
        d2 * x1 + e2 * y1 + y2,
    ]
}

/// Shapely's cosine and sine of an angle in degrees (values within 2.5e-16 of 0 are 0).
fn cos_sin(degrees: f64) -> (f64, f64) {
    let radians = degrees.to_radians();
    let snap = |v: f64| if v.abs() < 2.5e-16 { 0.0 } else { v };
    (snap(radians.cos()), snap(radians.sin()))
}

/// A pair `[x, y]` of numbers at `key`.
fn pair(args: &mut Args<'_>, key: &str) -> Option<(f64, f64)> {
    let value = args.value(key)?;
    let numbers: Option<Vec<f64>> = value
        .as_array()
        .map(|items| items.iter().map(Value::as_f64).collect::<Option<Vec<_>>>())
        .unwrap_or(None);
    match numbers.as_deref() {
        Some([x, y]) if x.is_finite() && y.is_finite() => Some((*x, *y)),
        _ => {
            args.problem(key, format!("expected [x, y] numbers, got {value}"));
            None
        }
    }
}

/// translate, then rotate, scale and skew about a fixed `origin`, as one matrix. Origins per
/// feature (`center`, `centroid`) are supported when only `translate` is given.
fn affine_transform(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let translate = pair(args, "translate");
    let rotate = args.f64("rotate");
    let scale = pair(args, "scale");
    let skew = pair(args, "skew");
    if translate.is_none() && rotate.is_none() && scale.is_none() && skew.is_none() {
        args.problem(
            "translate",
            "at least one of translate, rotate, scale, skew is required",
        );
        return;
    }
    let origin = match args.value("origin") {
        Some(Value::Array(_)) => pair(args, "origin"),
        None => None,
        Some(Value::String(_)) if rotate.is_none() && scale.is_none() && skew.is_none() => None,
        Some(other) => {
            args.problem(
                "origin",
                format!("{other}: an origin per feature is not supported yet (give [x, y])"),
            );
            return;
        }
    };
    let (x0, y0) = match origin {
        Some(point) => point,
        None if rotate.is_some() || scale.is_some() || skew.is_some() => {
            args.problem(
                "origin",
                "an origin per feature (the default center) is not supported yet (give [x, y])",
            );
            return;
        }
        None => (0.0, 0.0),
    };
    let mut matrix: Affine = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0];
    if let Some((dx, dy)) = translate {
        matrix = then(matrix, [1.0, 0.0, dx, 0.0, 1.0, dy]);
    }
    if let Some(angle) = rotate {
        let (c, s) = cos_sin(angle);
        let step = [c, -s, x0 - x0 * c + y0 * s, s, c, y0 - x0 * s - y0 * c];
        matrix = then(matrix, step);
    }
    if let Some((sx, sy)) = scale {
        matrix = then(matrix, [sx, 0.0, x0 - x0 * sx, 0.0, sy, y0 - y0 * sy]);
    }
    if let Some((xs, ys)) = skew {
        let (tx, ty) = (xs.to_radians().tan(), ys.to_radians().tan());
        matrix = then(matrix, [1.0, tx, -y0 * tx, ty, 1.0, -x0 * ty]);
    }
    let [a, b, xoff, d, e, yoff] = matrix;
    out.main(
        "affine_transform",
        params([
            ("a", json!(a)),
            ("b", json!(b)),
            ("d", json!(d)),
            ("e", json!(e)),
            ("xoff", json!(xoff)),
            ("yoff", json!(yoff)),
        ]),
    );
}

/// With `by`, GeoPandas' `dissolve` (a union per group, NULL groups left out, sorted); without,
/// every geometry collected into one Multi* with the first values of the attributes. `agg` is
/// `first` (default) or `{column: function}` (only those columns kept).
fn singleparts_to_multipart(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let by = args.names("by").unwrap_or_default();
    let mut aggregates = Map::new();
    let mut renames = Map::new();
    let mut others = "first";
    match args.value("agg") {
        None => {}
        Some(Value::String(name)) if name == "first" => {}
        Some(Value::Object(columns)) => {
            others = "drop";
            for (column, function) in columns {
                let native = match function.as_str() {
                    Some(f @ ("first" | "sum" | "min" | "max" | "count")) => f,
                    Some("mean") => "avg",
                    _ => {
                        args.problem(
                            &format!("agg.{column}"),
                            format!("{function} is not supported (first, sum, mean, min, max, count are)"),
                        );
                        continue;
                    }
                };
                aggregates.insert(column.clone(), json!(native));
                renames.insert(format!("{column}_{native}"), json!(column));
            }
        }
        Some(other) => {
            args.problem(
                "agg",
                format!("{other} is not supported (first or {{column: function}} are)"),
            );
            return;
        }
    }
    let mut native = params([
        ("aggregates", Value::Object(aggregates)),
        ("others", json!(others)),
    ]);
    if by.is_empty() {
        out.main(
            "filter",
            params([("where", json!("geom IS NOT NULL AND NOT ST_IsEmpty(geom)"))]),
        );
        out.main("singleparts_to_multipart", native);
    } else {
        out.keep_not_null(&by);
        native.insert("by".into(), json!(by));
        native.insert("on_invalid".into(), json!("error"));
        out.main("dissolve", native);
    }
    if !renames.is_empty() {
        out.main("rename_field", params([("fields", Value::Object(renames))]));
    }
    out.sort_ascending(&by);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(m: Affine, (x, y): (f64, f64)) -> (f64, f64) {
        (m[0] * x + m[1] * y + m[2], m[3] * x + m[4] * y + m[5])
    }

    #[test]
    fn composed_maps_apply_in_order() {
        // Translate by (1, 0), then rotate 90° about (0, 0): (1, 0) → (2, 0) → (0, 2).
        let translate = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0];
        let (c, s) = cos_sin(90.0);
        let rotate = [c, -s, 0.0, s, c, 0.0];
        let (x, y) = apply(then(translate, rotate), (1.0, 0.0));
        assert!(
            (x - 0.0).abs() < 1e-12 && (y - 2.0).abs() < 1e-12,
            "{x} {y}"
        );
    }
}
