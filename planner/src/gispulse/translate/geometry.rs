//! The *Vector geometry* group and `area_length`: GISPulse's parameters onto native geometry
//! steps, measuring in GISPulse's `crs_meters` (native `work_crs`) and leaving invalid
//! geometries as they are (GISPulse never repairs them).

use serde_json::{Map, Value, json};

use super::{Args, Emitted, Scope, Translator, params};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "buffer" => buffer,
        "simplify" => simplify,
        "area_length" => area_length,
        "centroid" => centroid,
        "reproject" => reproject,
        "convex_hull" => convex_hull,
        "concave_hull" => concave_hull,
        "envelope" => envelope,
        "boundary" => boundary,
        "make_valid" => make_valid,
        "union" => union,
        "clip" => clip,
        "line_merge" => line_merge,
        "delaunay_triangulation" => delaunay_triangulation,
        "dissolve" => dissolve,
        "voronoi_polygons" => voronoi_polygons,
        "chaikin_smooth" => chaikin_smooth,
        "polygonize" => polygonize,
        "offset_curve" => offset_curve,
        _ => return None,
    })
}

/// GISPulse's `crs_meters` (or its default) as native `work_crs`.
pub(super) fn work_crs(args: &mut Args<'_>, scope: &Scope<'_>) -> Value {
    let crs = match args.string("crs_meters") {
        Some(crs) => crs.replacen("epsg:", "EPSG:", 1),
        None => scope.default_crs_meters().to_owned(),
    };
    args.note(format!(
        "measures in {crs} units (GISPulse's crs_meters, native work_crs); without work_crs geomill measures true metres"
    ));
    json!(crs)
}

fn buffer(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let distance = args.f64("distance").unwrap_or(0.0);
    let segments = args.integer("quad_segs").unwrap_or(8);
    if !(1..=64).contains(&segments) {
        args.problem("quad_segs", "must be between 1 and 64");
    }
    for (key, default) in [("cap_style", "round"), ("join_style", "round")] {
        if let Some(style) = args.string(key).filter(|s| s != default) {
            args.problem(
                key,
                format!("{style:?} is not supported yet ({default} is)"),
            );
        }
    }
    if args.bool("single_sided") == Some(true) {
        args.problem("single_sided", "single-sided buffers are not supported yet");
    }
    if args.has("distance_col") {
        args.problem(
            "distance_col",
            "a distance per feature is not supported yet",
        );
    }
    args.value("mitre_limit");
    let mut native = params([
        ("distance", json!(distance)),
        ("segments", json!(segments)),
        ("on_invalid", json!("error")),
    ]);
    native.insert("work_crs".into(), work_crs(args, scope));
    out.main("buffer", native);
}

fn simplify(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let Some(tolerance) = args.f64("tolerance") else {
        args.problem("tolerance", "is required");
        return;
    };
    let algorithm = args.string("algorithm").unwrap_or_else(|| "dp".into());
    // GISPulse's `vw` runs Douglas-Peucker with topology preserved.
    let preserve = match algorithm.as_str() {
        "dp" => args.bool("preserve_topology").unwrap_or(true),
        "vw" => {
            args.value("preserve_topology");
            true
        }
        other => {
            args.problem(
                "algorithm",
                format!("{other:?} is not supported yet (dp and vw are)"),
            );
            return;
        }
    };
    let mut native = params([
        ("tolerance", json!(tolerance)),
        ("unit", json!("meters")),
        ("preserve_topology", json!(preserve)),
    ]);
    native.insert("work_crs".into(), work_crs(args, scope));
    out.main("simplify", native);
}

fn area_length(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let mut native = Map::new();
    if args.bool("compute_area").unwrap_or(true) {
        let name = args.string("area_col").unwrap_or_else(|| "area_m2".into());
        native.insert("field_area".into(), json!(name));
        native.insert("unit".into(), json!("crs"));
    } else {
        args.value("area_col");
    }
    if args.bool("compute_length").unwrap_or(true) {
        let name = args
            .string("length_col")
            .unwrap_or_else(|| "length_m".into());
        native.insert("field_length".into(), json!(name));
        native.insert("length_unit".into(), json!("crs"));
    } else {
        args.value("length_col");
    }
    let crs = work_crs(args, scope);
    if !native.is_empty() {
        native.insert("work_crs".into(), crs);
        out.main("area_length", native);
    }
}

fn centroid(_: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    out.main("centroid", Map::new());
}

fn reproject(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let Some(target) = args.string("target_crs") else {
        args.problem("target_crs", "is required");
        return;
    };
    out.main(
        "reproject",
        params([("to", json!(target.replacen("epsg:", "EPSG:", 1)))]),
    );
}

/// What a shape step's `by_group` keeps of each group's attributes.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Groups {
    /// The step takes no `by_group`.
    None,
    /// Every attribute, its first non-NULL value (GeoPandas' `dissolve`).
    KeepFirst,
    /// Only the group field.
    KeyOnly,
}

/// A shape step's input made whole first: `by_group` unions each group (rows of a NULL group
/// left out), `dissolve: true` the whole layer (only `geometry` kept; `by_group` wins). Answers
/// the group field, for [`sorted_groups`] after the shape step.
pub(super) fn whole_layer_first(
    args: &mut Args<'_>,
    out: &mut Emitted,
    groups: Groups,
) -> Option<String> {
    let group = if groups == Groups::None {
        None
    } else {
        args.string("by_group")
    };
    let whole = args.bool("dissolve") == Some(true);
    if let Some(field) = &group {
        out.keep_not_null(std::slice::from_ref(field));
        let others = if groups == Groups::KeepFirst {
            "first"
        } else {
            "drop"
        };
        out.main(
            "dissolve",
            params([
                ("by", json!([field])),
                ("others", json!(others)),
                ("on_invalid", json!("error")),
            ]),
        );
    } else if whole {
        out.main("union", params([("on_invalid", json!("error"))]));
        out.main("drop_field", params([("fields", json!(["count"]))]));
    }
    group
}

/// The groups in the order of their field (GeoPandas' `dissolve` sorts them).
fn sorted_groups(out: &mut Emitted, group: Option<String>) {
    out.sort_ascending(group.as_slice());
}

fn convex_hull(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let group = whole_layer_first(args, out, Groups::KeepFirst);
    out.main("convex_hull", Map::new());
    sorted_groups(out, group);
}

fn concave_hull(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let group = whole_layer_first(args, out, Groups::KeyOnly);
    let mut native = params([("ratio", json!(args.f64("ratio").unwrap_or(0.3)))]);
    if let Some(holes) = args.bool("allow_holes") {
        native.insert("allow_holes".into(), json!(holes));
    }
    out.main("concave_hull", native);
    sorted_groups(out, group);
}

fn envelope(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let group = whole_layer_first(args, out, Groups::KeepFirst);
    out.main("envelope", Map::new());
    sorted_groups(out, group);
}

/// GISPulse drops the rows left empty (`drop_empty`, default true); `with_null` drops NULL
/// geometries too.
fn drop_empty(args: &mut Args<'_>, out: &mut Emitted, with_null: bool) {
    if args.bool("drop_empty").unwrap_or(true) {
        let condition = if with_null {
            "geom IS NOT NULL AND NOT ST_IsEmpty(geom)"
        } else {
            "geom IS NULL OR NOT ST_IsEmpty(geom)"
        };
        out.main("filter", params([("where", json!(condition))]));
    }
}

fn boundary(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    out.main("boundary", Map::new());
    drop_empty(args, out, false);
}

fn make_valid(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    if args.bool("keep_geom_type") == Some(true) {
        args.problem(
            "keep_geom_type",
            "keep_geom_type: true is not supported yet",
        );
    }
    out.main("make_valid", Map::new());
    drop_empty(args, out, true);
}

fn union(_: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    out.main("union", params([("on_invalid", json!("error"))]));
    out.main("drop_field", params([("fields", json!(["count"]))]));
}

fn clip(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let Some(mask) = args.string("ref_layer") else {
        args.problem("ref_layer", "clip needs a reference layer (ref_layer)");
        return;
    };
    let mask = (scope.reference)(&mask);
    out.main(
        "clip",
        params([("mask", json!(mask)), ("on_invalid", json!("error"))]),
    );
}

fn line_merge(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let directed = args.bool("directed").unwrap_or(false);
    out.main("line_merge", params([("directed", json!(directed))]));
}

/// The triangles (or edges) of the layer's vertices, a new layer with only its geometry:
/// GISPulse triangulates the union of the layer (noded, shared vertices once).
fn delaunay_triangulation(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let tolerance = args.f64("tolerance").unwrap_or(0.0);
    let output = if args.bool("only_edges").unwrap_or(false) {
        "edges"
    } else {
        "polygons"
    };
    out.main("union", params([("on_invalid", json!("error"))]));
    out.main("drop_field", params([("fields", json!(["count"]))]));
    out.main(
        "delaunay_triangulation",
        params([("output", json!(output)), ("tolerance", json!(tolerance))]),
    );
    out.main("drop_field", params([("fields", json!(["id"]))]));
}

/// GeoPandas' `dissolve`: a union per value of `by`, every other attribute its first non-NULL
/// value in input order; rows whose `by` is NULL are left out and the groups sorted by `by`.
/// Without `by` the whole layer is one row with an `index` of 0.
fn dissolve(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let by = args.names("by").unwrap_or_default();
    out.keep_not_null(&by);
    out.main(
        "dissolve",
        params([
            ("by", json!(by)),
            ("others", json!("first")),
            ("on_invalid", json!("error")),
        ]),
    );
    if by.is_empty() {
        out.main(
            "calculate",
            params([("expressions", json!({"index": "0"}))]),
        );
    } else {
        out.sort_ascending(&by);
    }
}

/// Shapely's `voronoi_polygons` of the layer's union: every distinct vertex a site, a new
/// layer of the cells alone, reaching at least `extend_to_wkt`'s bounds.
fn voronoi_polygons(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    if args.f64("tolerance").is_some_and(|t| t != 0.0) {
        args.problem("tolerance", "a snapping tolerance is not supported yet");
    }
    if args.bool("only_edges") == Some(true) {
        args.problem("only_edges", "the diagram's edges are not supported yet");
    }
    let mut native = Map::new();
    if let Some(wkt) = args.string("extend_to_wkt") {
        match wkt_bounds(&wkt) {
            Some(bounds) => {
                native.insert("envelope".into(), json!(bounds));
            }
            None => args.problem("extend_to_wkt", "is not WKT geomill reads"),
        }
    }
    out.main("union", params([("on_invalid", json!("error"))]));
    out.main("drop_field", params([("fields", json!(["count"]))]));
    out.main(
        "extract_vertices",
        params([("index_field", json!("__geomill_vertex"))]),
    );
    out.main("filter", params([("where", json!("geom IS NOT NULL"))]));
    out.main(
        "deduplicate",
        params([("fields", json!(["geom"])), ("keep", json!("first"))]),
    );
    out.main("voronoi_polygons", native);
    out.main(
        "drop_field",
        params([("fields", json!(["__geomill_vertex"]))]),
    );
}

/// Shapely's offset curve in `crs_meters` (a signed distance: left when positive).
fn offset_curve(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let distance = args.f64("distance").unwrap_or(1.0);
    if distance == 0.0 || !distance.is_finite() {
        args.problem(
            "distance",
            "must be a number other than 0 (GISPulse leaves lines as they are at 0)",
        );
        return;
    }
    let mut native = params([
        ("distance", json!(distance.abs())),
        ("unit", json!("crs")),
        ("side", json!(if distance > 0.0 { "left" } else { "right" })),
        ("segments", json!(args.integer("quad_segs").unwrap_or(8))),
        (
            "join",
            json!(args.string("join_style").unwrap_or_else(|| "round".into())),
        ),
        ("mitre_limit", json!(args.f64("mitre_limit").unwrap_or(5.0))),
    ]);
    native.insert("work_crs".into(), work_crs(args, scope));
    args.note(
        "polygons and points give NULL (GISPulse offsets a polygon's rings and gives an empty line for a point): apply boundary first to offset outlines",
    );
    out.main("offset_curve", native);
}

/// Shapely's polygonize of the lines as given (not noded): a new layer of the faces alone.
fn polygonize(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    args.value("keep_attrs");
    out.main("polygonize", params([("node", json!(false))]));
    out.main("drop_field", params([("fields", json!(["id"]))]));
}

/// `[xmin, ymin, xmax, ymax]` of a WKT geometry's coordinates (each tuple's first two numbers);
/// `None` when it has none or a tuple is not numbers.
fn wkt_bounds(wkt: &str) -> Option<[f64; 4]> {
    let start = wkt.find('(')?;
    let mut bounds = [
        f64::INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    ];
    for tuple in wkt[start..].split(['(', ')', ',']) {
        let mut numbers = tuple.split_whitespace();
        let Some(first) = numbers.next() else {
            continue;
        };
        let x: f64 = first.parse().ok()?;
        let y: f64 = numbers.next()?.parse().ok()?;
        if !(x.is_finite() && y.is_finite()) {
            return None;
        }
        bounds = [
            bounds[0].min(x),
            bounds[1].min(y),
            bounds[2].max(x),
            bounds[3].max(y),
        ];
    }
    bounds[0].is_finite().then_some(bounds)
}

/// GISPulse's corner cutting (every segment of lines and holes), 2 passes by default.
fn chaikin_smooth(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let iterations = args.integer("iterations").unwrap_or(2);
    if !(1..=5).contains(&iterations) {
        args.problem("iterations", "1 to 5 passes are supported");
        return;
    }
    out.main(
        "chaikin_smooth",
        params([
            ("iterations", json!(iterations)),
            ("every_segment", json!(true)),
        ]),
    );
}

#[cfg(test)]
mod tests {
    use super::wkt_bounds;

    #[test]
    fn wkt_bounds_are_the_coordinates_extent() {
        assert_eq!(
            wkt_bounds("POLYGON ((0 0, 10 -2, 4 7 1, 0 0))"),
            Some([0.0, -2.0, 10.0, 7.0])
        );
        assert_eq!(wkt_bounds("POINT EMPTY"), None);
        assert_eq!(wkt_bounds("POINT (a b)"), None);
    }
}
