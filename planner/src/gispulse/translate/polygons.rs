//! GISPulse's polygon cleaning, measuring in its `crs_meters` (native `work_crs`): gaps and
//! overlaps onto the native steps of the same names; `polygon_remove_slivers` drops (native
//! `polygon_remove_slivers` merges slivers into a neighbour, another rule) and
//! `polygon_snap_borders` rounds every vertex to a grid (Shapely's `set_precision`, native
//! `snap_to_grid`; native `polygon_snap_borders` snaps to neighbours, another rule).

use serde_json::json;

use super::geometry::work_crs;
use super::{Args, Emitted, Scope, Translator, params};
use crate::sql::quote::ident;

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "polygon_remove_slivers" => polygon_remove_slivers,
        "polygon_snap_borders" => polygon_snap_borders,
        "polygon_fix_gaps" => polygon_fix_gaps,
        "polygon_fix_overlaps" => polygon_fix_overlaps,
        _ => return None,
    })
}

/// Native columns the translation measures into for a moment.
const AREA: &str = "__geomill_gispulse_area";
const PERIMETER: &str = "__geomill_gispulse_perimeter";

/// Keeps the rows of area at least `min_area` and, with `max_shape_index`, of shape index
/// `perimeter² / (4π·area)` at most that (a zero area counting as infinite); NULL geometries
/// have no area and go, as in GISPulse. Measured in `crs_meters`; the geometry kept as it is.
fn polygon_remove_slivers(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let min_area = args.f64("min_area").unwrap_or(1.0);
    let Some(min_area) = number(min_area).filter(|_| min_area >= 0.0) else {
        args.problem("min_area", "must be a number of at least 0");
        return;
    };
    let max_shape_index = match args.f64("max_shape_index") {
        None => None,
        Some(max) => {
            let Some(max) = number(max) else {
                args.problem("max_shape_index", "must be a finite number");
                return;
            };
            Some(max)
        }
    };
    let mut measure = params([
        ("field_area", json!(AREA)),
        ("unit", json!("crs")),
        ("field_length", json!(PERIMETER)),
        ("length_unit", json!("crs")),
    ]);
    measure.insert("work_crs".into(), work_crs(args, scope));
    out.main("area_length", measure);
    let (area, perimeter) = (ident(AREA), ident(PERIMETER));
    let mut keep = format!("{area} >= {min_area}");
    if let Some(max) = max_shape_index {
        // Python's order: (perim ** 2) / ((4 * math.pi) * area).
        let pi = number(std::f64::consts::PI).unwrap_or_default();
        keep.push_str(&format!(
            " AND {perimeter} * {perimeter} / (4 * {pi} * NULLIF({area}, 0)) <= {max}"
        ));
    }
    out.main("filter", params([("where", json!(keep))]));
    out.main("drop_field", params([("fields", json!([AREA, PERIMETER]))]));
}

/// Every vertex rounded to a grid of `grid_size` in `crs_meters` (GEOS's precision reduction
/// keeping polygons valid, as `shapely.set_precision`).
fn polygon_snap_borders(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let size = args.f64("grid_size").unwrap_or(0.01);
    if !(size > 0.0 && size.is_finite()) {
        args.problem("grid_size", "must be a number greater than 0");
        return;
    }
    let mut native = params([("size", json!(size)), ("on_invalid", json!("error"))]);
    native.insert("work_crs".into(), work_crs(args, scope));
    out.main("snap_to_grid", native);
}

/// Holes of the coverage of at most `max_gap_area` (0: none, the layer as it is) each given
/// to the feature sharing the longest border with it.
fn polygon_fix_gaps(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let max_area = args.f64("max_gap_area").unwrap_or(100.0);
    if !(max_area >= 0.0 && max_area.is_finite()) {
        args.problem("max_gap_area", "must be a number of at least 0");
        return;
    }
    let crs = work_crs(args, scope);
    if max_area == 0.0 {
        return;
    }
    args.note("equal shared borders go to the earlier row here; GISPulse's choice then follows its spatial index and a 1e-6 buffer");
    out.main(
        "polygon_fix_gaps",
        params([("max_area", json!(max_area)), ("work_crs", crs)]),
    );
}

/// Each overlap kept by one feature (GISPulse's `rule`: `smallest` by default, `largest`,
/// `first`; equal areas to the earlier row) and cut from the others.
fn polygon_fix_overlaps(args: &mut Args<'_>, scope: &Scope<'_>, out: &mut Emitted) {
    let rule = args.string("rule").unwrap_or_else(|| "smallest".into());
    if !matches!(rule.as_str(), "smallest" | "largest" | "first") {
        args.problem(
            "rule",
            format!("{rule:?} is not a rule (smallest, largest or first)"),
        );
        return;
    }
    args.note("GISPulse keeps overlaps under 1e-12 square units, geomill cuts them too");
    out.main(
        "polygon_fix_overlaps",
        params([("owner", json!(rule)), ("work_crs", work_crs(args, scope))]),
    );
}

/// A finite number as an SQL literal.
fn number(value: f64) -> Option<String> {
    crate::sql::quote::number(value).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn translated(name: &str, given: Value) -> (Vec<String>, Emitted) {
        match translator(name) {
            Some(translate) => super::super::translated_by(translate, given),
            None => panic!("{name} has no translator here"),
        }
    }

    #[test]
    fn slivers_are_measured_in_mercator_then_filtered_out() {
        let (problems, out) = translated(
            "polygon_remove_slivers",
            json!({"min_area": 5e9, "max_shape_index": 3}),
        );
        assert!(problems.is_empty(), "{problems:?}");
        let steps: Vec<&str> = out.steps.iter().map(|(c, _, _)| c.as_str()).collect();
        assert_eq!(steps, ["area_length", "filter", "drop_field"]);
        assert_eq!(out.steps[0].1["work_crs"], "EPSG:3857");
        let keep = out.steps[1].1["where"].as_str().unwrap();
        assert!(
            keep.starts_with("\"__geomill_gispulse_area\" >= 5000000000 AND"),
            "{keep}"
        );
        assert!(
            keep.contains("/ (4 * 3.141592653589793 * NULLIF("),
            "{keep}"
        );
        assert!(keep.ends_with("<= 3"), "{keep}");
    }

    #[test]
    fn gaps_and_overlaps_take_gispulses_defaults() {
        let (problems, out) = translated("polygon_fix_overlaps", json!({}));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(out.steps[0].1["owner"], "smallest");
        assert_eq!(out.steps[0].1["work_crs"], "EPSG:3857");
        let (_, out) = translated("polygon_fix_gaps", json!({}));
        assert_eq!(out.steps[0].1["max_area"], 100.0);
        let (problems, out) = translated("polygon_fix_gaps", json!({"max_gap_area": 0}));
        assert!(problems.is_empty() && out.steps.is_empty(), "{problems:?}");
        let (problems, _) = translated("polygon_fix_overlaps", json!({"rule": "oldest"}));
        assert!(problems[0].contains("oldest"), "{problems:?}");
    }

    #[test]
    fn borders_round_to_a_grid_and_bad_sizes_are_named() {
        let (problems, out) = translated("polygon_snap_borders", json!({"grid_size": 500}));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(out.steps[0].0, "snap_to_grid");
        assert_eq!(out.steps[0].1["size"], 500.0);
        let (problems, _) = translated("polygon_snap_borders", json!({"grid_size": 0}));
        assert!(problems[0].contains("greater than 0"), "{problems:?}");
        let (problems, _) = translated("polygon_remove_slivers", json!({"min_area": -1}));
        assert!(problems[0].contains("at least 0"), "{problems:?}");
    }
}
