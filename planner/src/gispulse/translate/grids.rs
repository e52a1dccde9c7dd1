//! GISPulse's `grid_create` and `hexgrid_create` onto the native ones: the cells laid from
//! the lower-left corner of the reference layer's extent (squares: `origin: extent`;
//! hexagons: GISPulse's overlapping rows, `layout: offset_rows`) in `crs_meters`, over the
//! reference layer (GISPulse ignores the step's input), or over `bounds` in `crs_meters`;
//! `row`/`col` in GISPulse's row-major order; and its `kde_heatmap`, scikit-learn's
//! normalised density at the nodes of its grid (`sample: nodes`, `normalize`).

use serde_json::{Value, json};

use super::geometry::work_crs;
use super::{Args, Emitted, Scope, Translator, params, reference_layer};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "grid_create" => grid_create,
        "hexgrid_create" => hexgrid_create,
        "kde_heatmap" => kde_heatmap,
        _ => return None,
    })
}

fn grid_create(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    grid(args, scope, out, ("grid_create", "origin", "extent"));
}

fn hexgrid_create(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    grid(
        args,
        scope,
        out,
        ("hexgrid_create", "layout", "offset_rows"),
    );
}

/// scikit-learn's `KernelDensity` of the centroids in `crs_meters` at the nodes of GISPulse's
/// grid: points with `density`.
fn kde_heatmap(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let bandwidth = args.f64("bandwidth").unwrap_or(100.0);
    let cell = args.f64("cell_size").unwrap_or(50.0);
    for (key, value) in [("bandwidth", bandwidth), ("cell_size", cell)] {
        if value <= 0.0 {
            args.problem(key, "must be greater than 0");
            return;
        }
    }
    let kernel = args.string("kernel").unwrap_or_else(|| "gaussian".into());
    if !["gaussian", "tophat", "epanechnikov"].contains(&kernel.as_str()) {
        args.problem(
            "kernel",
            format!("{kernel:?}: expected gaussian, tophat or epanechnikov"),
        );
        return;
    }
    let mut native = params([
        ("bandwidth", json!(bandwidth)),
        ("cell_size", json!(cell)),
        ("unit", json!("crs")),
        ("kernel", json!(kernel)),
        ("sample", json!("nodes")),
        ("normalize", json!(true)),
    ]);
    if let Some(weight) = args.string("weight_field") {
        native.insert("weight".into(), json!(weight));
        args.note("GISPulse fails on a NULL weight; geomill counts it 0");
    }
    native.insert("work_crs".into(), work_crs(args, scope));
    out.main("kde_heatmap", native);
    out.main(
        "drop_field",
        params([("fields", json!(["cell_id", "i", "j"]))]),
    );
}

/// The native grid `capability` with its GISPulse `option: value`.
fn grid(
    args: &mut Args<'_>,
    scope: &Scope<'_>,
    out: &mut Emitted,
    (capability, option, value): (&str, &str, &str),
) {
    let size = args.f64("cell_size").unwrap_or(100.0);
    if size <= 0.0 {
        args.problem("cell_size", "must be greater than 0");
        return;
    }
    let clip = args.bool("clip_to_extent").unwrap_or(true);
    let mut native = params([
        ("size", json!(size)),
        ("unit", json!("crs")),
        (option, json!(value)),
    ]);
    if args.has("ref_layer") {
        let Some(reference) = reference_layer(args, scope, out, false) else {
            return;
        };
        out.main_from(&reference);
        native.insert("touching".into(), json!(clip));
        native.insert("work_crs".into(), work_crs(args, scope));
        args.value("bounds");
        out.main(capability, native);
    } else {
        let bounds = match args.value("bounds") {
            Some(Value::Array(b)) if b.len() == 4 && b.iter().all(Value::is_number) => b.clone(),
            Some(other) => {
                args.problem(
                    "bounds",
                    format!("expected [minx, miny, maxx, maxy], got {other}"),
                );
                return;
            }
            None => {
                args.problem(
                    "ref_layer",
                    "GISPulse needs a reference layer (ref_layer) or bounds",
                );
                return;
            }
        };
        let crs = args.string("crs_meters").map_or_else(
            || "EPSG:3857".to_owned(),
            |c| c.replacen("epsg:", "EPSG:", 1),
        );
        if crs.starts_with("auto") {
            args.problem("crs_meters", "bounds need a named CRS");
            return;
        }
        native.insert("bbox".into(), Value::Array(bounds));
        out.main(capability, native);
        out.main("assign_projection", params([("crs", json!(crs))]));
        args.note("the grid over bounds is labelled crs_meters, whatever the step's input");
    }
    out.main(
        "rename_field",
        params([("fields", json!({"i": "col", "j": "row"}))]),
    );
    out.main("drop_field", params([("fields", json!(["cell_id"]))]));
    out.main(
        "sort",
        params([("by", json!([{"field": "row"}, {"field": "col"}]))]),
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::translated_by;

    #[test]
    fn a_grid_over_a_reference_layer_starts_there() {
        let (problems, out) = translated_by(
            super::grid_create,
            json!({"ref_layer": "cities", "cell_size": 5000, "crs_meters": "EPSG:3395"}),
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(out.chain_from.as_deref(), Some("cities"));
        let (capability, params, _) = &out.steps[0];
        assert_eq!(capability, "grid_create");
        assert_eq!(params["origin"], json!("extent"));
        assert_eq!(params["touching"], json!(true));
        assert_eq!(params["work_crs"], json!("EPSG:3395"));
    }

    #[test]
    fn a_grid_needs_a_reference_or_bounds() {
        let (problems, _) = translated_by(super::grid_create, json!({"cell_size": 10}));
        assert!(problems[0].contains("ref_layer"), "{problems:?}");
        let (problems, out) = translated_by(
            super::grid_create,
            json!({"cell_size": 10, "bounds": [0, 0, 100, 50]}),
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(out.steps[1].0, "assign_projection");
    }
}
