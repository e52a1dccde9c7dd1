//! What the raster capabilities share: the raster a step names, resolved against the server's
//! raster datasets (never opened as a path from the request), and the raster dataset a step
//! writes.

use super::LowerContext;
use crate::error::Problem;
use crate::plan::ops::raster::{RasterRef, RasterTarget};

/// The raster named by parameter `param` (a dataset id or name, or a GISPulse `raster_path`
/// matched by its file name), with each of `bands` (parameter, 1-based band) checked against
/// its band count. Unresolved, not refused, while planning without the server's catalog.
pub fn resolve(
    ctx: &LowerContext<'_>,
    param: &str,
    named: &str,
    bands: &[(&str, usize)],
) -> Result<RasterRef, Vec<Problem>> {
    let Some(catalog) = ctx.rasters else {
        return Ok(RasterRef {
            name: named.to_owned(),
            path: None,
            crs: None,
        });
    };
    let Some(source) = catalog.find(named) else {
        return Err(vec![Problem::new(
            ctx.at(param),
            format!(
                "{named:?} is not a raster dataset: upload a GeoTIFF and name it by its id or name"
            ),
        )]);
    };
    let mut problems = Vec::new();
    for (band_param, band) in bands {
        if *band == 0 || *band > source.bands {
            problems.push(Problem::new(
                ctx.at(band_param),
                format!(
                    "band {band} is out of range: the raster has {} band{}",
                    source.bands,
                    if source.bands == 1 { "" } else { "s" }
                ),
            ));
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(RasterRef {
        name: named.to_owned(),
        path: Some(source.path.clone()),
        crs: source.crs.clone(),
    })
}

/// The raster dataset a step writes: named by `output` (GISPulse's `output_path`: its file name
/// without the extension, other characters than letters, digits, `-`, `_` and `.` made `_`),
/// else by the step; its file in the run's raster folder when the run writes rasters.
pub fn target(ctx: &LowerContext<'_>, output: Option<&str>) -> RasterTarget {
    let given = output
        .map(|o| o.rsplit(['/', '\\']).next().unwrap_or(o))
        .map(|file| {
            let lower = file.to_ascii_lowercase();
            if lower.ends_with(".tif") {
                &file[..file.len() - 4]
            } else if lower.ends_with(".tiff") {
                &file[..file.len() - 5]
            } else {
                file
            }
        })
        .filter(|stem| !stem.is_empty() && !stem.starts_with('.'));
    let name: String = given
        .unwrap_or(ctx.step_id)
        .chars()
        .take(100)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = ctx
        .rasters
        .and_then(|r| r.outputs.as_deref())
        .map(|dir| format!("{dir}/{name}.tif"));
    RasterTarget { name, path }
}

/// A nodata value that is a finite number, or the problem naming `param`.
pub fn finite(ctx: &LowerContext<'_>, param: &str, value: Option<f64>) -> Result<(), Vec<Problem>> {
    match value {
        Some(v) if !v.is_finite() => {
            Err(vec![Problem::new(ctx.at(param), "must be a finite number")])
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::schema::{RasterCatalog, RasterSource};

    fn catalog() -> RasterCatalog {
        let source = RasterSource {
            path: "/data/uploads/1/dem.tif".into(),
            bands: 4,
            crs: Some("EPSG:31985".into()),
        };
        RasterCatalog {
            sources: BTreeMap::from([("dem.tif".to_owned(), source)]),
            outputs: Some("/data/results/j/rasters".into()),
        }
    }

    fn ctx(rasters: Option<&RasterCatalog>) -> LowerContext<'_> {
        LowerContext {
            step_id: "clip step",
            path: "steps[0].params",
            input: None,
            others: &[],
            rasters,
        }
    }

    #[test]
    fn a_raster_path_is_matched_by_its_file_name_never_opened() {
        let catalog = catalog();
        let ctx = ctx(Some(&catalog));
        for named in ["dem.tif", "data/dem.tif", "/etc/../dem.tif"] {
            let found = resolve(&ctx, "raster", named, &[]).unwrap();
            assert_eq!(found.path.as_deref(), Some("/data/uploads/1/dem.tif"));
        }
        let error = resolve(&ctx, "raster", "/etc/passwd", &[]).unwrap_err();
        assert!(error[0].to_string().contains("is not a raster dataset"));
        let error = resolve(&ctx, "raster", "dem.tif", &[("nir_band", 5)]).unwrap_err();
        assert!(
            error[0]
                .to_string()
                .contains("band 5 is out of range: the raster has 4 bands")
        );
    }

    #[test]
    fn a_target_is_a_plain_name_in_the_runs_folder() {
        let catalog = catalog();
        let ctx = ctx(Some(&catalog));
        let target = target(&ctx, Some("../../etc/out clip.TIF"));
        assert_eq!(target.name, "out_clip");
        assert_eq!(
            target.path.as_deref(),
            Some("/data/results/j/rasters/out_clip.tif")
        );
        assert_eq!(super::target(&ctx, None).name, "clip_step");
        assert_eq!(super::target(&ctx, Some("..")).name, "clip_step");
        assert_eq!(super::target(&self::ctx(None), Some("x.tif")).path, None);
    }
}
