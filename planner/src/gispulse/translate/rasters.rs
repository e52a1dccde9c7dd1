//! GISPulse's raster capabilities onto the native ones: its `raster_path`, `raster_paths` and
//! `output_path` become the raster datasets they name (a path is matched by its file name among
//! the server's raster datasets, never opened) and the name of the raster written; its defaults
//! kept (`zonal_stats`: `min max mean std count` with prefix `rs_`).

use serde_json::{Map, Value, json};

use super::{Args, Emitted, Scope, Translator};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "zonal_stats" => zonal_stats,
        "raster_clip" => raster_clip,
        "ndvi" => ndvi,
        "raster_reproject" => raster_reproject,
        "raster_merge" => raster_merge,
        "change_detection" => change_detection,
        _ => return None,
    })
}

/// `key` (a path) as native `to`, or a problem when GISPulse requires it.
fn required_path(args: &mut Args<'_>, key: &str, to: &str, native: &mut Map<String, Value>) {
    match args.string(key).filter(|p| !p.is_empty()) {
        Some(path) => {
            native.insert(to.to_owned(), json!(path));
        }
        None => args.problem(key, "is required"),
    }
}

/// Copies each of `keys` when given.
fn keep(args: &mut Args<'_>, keys: &[&str], native: &mut Map<String, Value>) {
    for key in keys {
        if let Some(value) = args.value(key) {
            native.insert((*key).to_owned(), value.clone());
        }
    }
}

fn zonal_stats(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let mut native = Map::new();
    required_path(args, "raster_path", "raster", &mut native);
    let stats = args
        .value("stats")
        .cloned()
        .unwrap_or_else(|| json!(["min", "max", "mean", "std", "count"]));
    native.insert("stats".into(), stats);
    let prefix = args.string("prefix").unwrap_or_else(|| "rs_".into());
    native.insert("prefix".into(), json!(prefix));
    keep(args, &["nodata", "band"], &mut native);
    args.note(
        "the polygons are read in the raster's CRS as given (GISPulse does not reproject them)",
    );
    out.main("zonal_stats", native);
}

fn raster_clip(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let mut native = Map::new();
    required_path(args, "raster_path", "raster", &mut native);
    required_path(args, "output_path", "output", &mut native);
    keep(args, &["all_touched", "crop", "nodata"], &mut native);
    out.main("raster_clip", native);
}

fn ndvi(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let mut native = Map::new();
    required_path(args, "raster_path", "raster", &mut native);
    required_path(args, "output_path", "output", &mut native);
    keep(args, &["red_band", "nir_band"], &mut native);
    out.main("ndvi", native);
}

fn raster_reproject(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let mut native = Map::new();
    required_path(args, "raster_path", "raster", &mut native);
    required_path(args, "output_path", "output", &mut native);
    keep(args, &["target_crs", "resampling"], &mut native);
    out.main("raster_reproject", native);
}

fn raster_merge(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let mut native = Map::new();
    match args.names("raster_paths") {
        Some(paths) if paths.len() >= 2 => {
            native.insert("rasters".into(), json!(paths));
        }
        _ => args.problem("raster_paths", "needs at least 2 raster paths"),
    }
    required_path(args, "output_path", "output", &mut native);
    keep(args, &["method", "nodata"], &mut native);
    out.main("raster_merge", native);
}

fn change_detection(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let mut native = Map::new();
    required_path(args, "raster_before", "raster_before", &mut native);
    required_path(args, "raster_after", "raster_after", &mut native);
    keep(args, &["threshold", "band", "output_crs"], &mut native);
    out.main("change_detection", native);
}
