//! The GDAL calls the `gdal` crate does not wrap — polygonising a band, GDAL's suggested grid
//! for a warp, the warp itself (`gdalwarp`'s library form), PROJ's identification of a CRS —
//! each behind a safe function.
//! The only module of the workspace allowed `unsafe`: every block states why it holds.
#![allow(unsafe_code)]

use std::ffi::c_int;
use std::ptr;

use gdal::Dataset;
use gdal::raster::RasterBand;
use gdal::vector::LayerAccess;

use super::RasterError;

/// GDAL's last error message, or `what` when it set none.
fn last_error(what: &str) -> RasterError {
    // SAFETY: CPLGetLastErrorMsg returns a pointer to a NUL-terminated thread-local buffer
    // GDAL owns (never null); it is copied before any other GDAL call.
    let message = unsafe {
        let raw = gdal_sys::CPLGetLastErrorMsg();
        if raw.is_null() {
            String::new()
        } else {
            std::ffi::CStr::from_ptr(raw).to_string_lossy().into_owned()
        }
    };
    RasterError::Input(if message.is_empty() {
        what.to_owned()
    } else {
        format!("{what}: {message}")
    })
}

/// Polygonises `values` where `mask` is not 0 into `layer` (a polygon per 4-connected region of
/// equal values, the value in field `field`), as rasterio's `features.shapes` does.
pub fn polygonize(
    values: &RasterBand<'_>,
    mask: &RasterBand<'_>,
    layer: &gdal::vector::Layer<'_>,
    field: i32,
) -> Result<(), RasterError> {
    // SAFETY: the three handles are valid for the borrows' lifetimes (the bands and layer are
    // borrowed from open datasets); no options, no progress callback.
    let status = unsafe {
        gdal_sys::GDALPolygonize(
            values.c_rasterband(),
            mask.c_rasterband(),
            layer.c_layer(),
            field,
            ptr::null_mut(),
            None,
            ptr::null_mut(),
        )
    };
    if status == gdal_sys::CPLErr::CE_None {
        Ok(())
    } else {
        Err(last_error("polygonising the changed cells"))
    }
}

/// The grid GDAL suggests for warping `source` to the CRS `wkt` (what rasterio's
/// `calculate_default_transform` answers): its geotransform, columns and rows.
pub fn suggested_grid(
    source: &Dataset,
    wkt: &str,
) -> Result<([f64; 6], usize, usize), RasterError> {
    let mut options = gdal::cpl::CslStringList::new();
    options
        .add_string(&format!("DST_SRS={wkt}"))
        .map_err(RasterError::Gdal)?;
    let mut transform = [0.0_f64; 6];
    let (mut pixels, mut lines): (c_int, c_int) = (0, 0);
    let mut extent = [0.0_f64; 4];
    // SAFETY: the source handle is valid while `source` is borrowed; the transformer is created
    // here, used by GDALSuggestedWarpOutput2 alone and destroyed before returning; the out
    // pointers are to locals of the sizes GDAL writes (6 doubles, 2 ints, 4 doubles).
    let status = unsafe {
        let transformer = gdal_sys::GDALCreateGenImgProjTransformer2(
            source.c_dataset(),
            ptr::null_mut(),
            options.as_ptr(),
        );
        if transformer.is_null() {
            return Err(last_error("no transformation to the target CRS"));
        }
        let status = gdal_sys::GDALSuggestedWarpOutput2(
            source.c_dataset(),
            Some(gdal_sys::GDALGenImgProjTransform),
            transformer,
            transform.as_mut_ptr(),
            &mut pixels,
            &mut lines,
            extent.as_mut_ptr(),
            0,
        );
        gdal_sys::GDALDestroyGenImgProjTransformer(transformer);
        status
    };
    if status != gdal_sys::CPLErr::CE_None || pixels <= 0 || lines <= 0 {
        return Err(last_error("GDAL suggested no grid for the target CRS"));
    }
    #[allow(clippy::cast_sign_loss)]
    Ok((transform, pixels as usize, lines as usize))
}

/// Warps `source` into `destination` (a raster already made with its grid, CRS and nodata) as
/// `gdalwarp` does with `arguments` (its options, without file names).
pub fn warp_into(
    source: &Dataset,
    destination: &Dataset,
    arguments: &[String],
) -> Result<(), RasterError> {
    let mut argv = gdal::cpl::CslStringList::new();
    for argument in arguments {
        argv.add_string(argument).map_err(RasterError::Gdal)?;
    }
    // SAFETY: the options are created from a NUL-terminated list GDAL copies, and freed here;
    // the source handle array holds one handle valid while `source` is borrowed; GDALWarp
    // writes into the destination handle, valid while `destination` is borrowed, and returns
    // it (or null on failure): the handle stays owned by `destination`.
    let written = unsafe {
        let options = gdal_sys::GDALWarpAppOptionsNew(argv.as_ptr(), ptr::null_mut());
        if options.is_null() {
            return Err(last_error("invalid warp options"));
        }
        let mut sources = [source.c_dataset()];
        let mut usage_error: c_int = 0;
        let written = gdal_sys::GDALWarp(
            ptr::null(),
            destination.c_dataset(),
            1,
            sources.as_mut_ptr(),
            options,
            &mut usage_error,
        );
        gdal_sys::GDALWarpAppOptionsFree(options);
        written
    };
    if written.is_null() {
        return Err(last_error("the warp failed"));
    }
    Ok(())
}

/// Bounds GDAL's block cache (shared by every raster the process opens) to `bytes`.
pub fn bound_block_cache(bytes: i64) {
    // SAFETY: GDALSetCacheMax64 takes a plain integer and only sets the cache's limit.
    unsafe { gdal_sys::GDALSetCacheMax64(bytes) }
}

/// The EPSG code PROJ identifies `srs` as with at least `min_confidence` per cent, the most
/// confident first (pyproj's `to_epsg` with its default of 70): a WKT without an `ID` that
/// describes an EPSG CRS under another name is still found.
pub(crate) fn identify_epsg(
    srs: &gdal::spatial_ref::SpatialRef,
    min_confidence: i32,
) -> Option<u32> {
    let mut count: c_int = 0;
    let mut confidences: *mut c_int = ptr::null_mut();
    // SAFETY: the handle is valid while `srs` is borrowed; OSRFindMatches answers an array of
    // `count` handles (or null) and an array of `count` confidences that this block reads within
    // `count` and frees with the functions GDAL documents for them (OSRFreeSRSArray, CPLFree =
    // VSIFree); the authority strings belong to the handles and are copied before the arrays
    // are freed.
    unsafe {
        let matches = gdal_sys::OSRFindMatches(
            srs.to_c_hsrs(),
            ptr::null_mut(),
            &mut count,
            &mut confidences,
        );
        if matches.is_null() {
            return None;
        }
        let mut found = None;
        for index in 0..usize::try_from(count).unwrap_or(0) {
            let confidence = if confidences.is_null() {
                0
            } else {
                *confidences.add(index)
            };
            let candidate = *matches.add(index);
            if confidence < min_confidence || candidate.is_null() {
                continue;
            }
            let name = gdal_sys::OSRGetAuthorityName(candidate, ptr::null());
            let code = gdal_sys::OSRGetAuthorityCode(candidate, ptr::null());
            if name.is_null() || code.is_null() {
                continue;
            }
            let is_epsg = std::ffi::CStr::from_ptr(name).to_str() == Ok("EPSG");
            let number = std::ffi::CStr::from_ptr(code)
                .to_str()
                .ok()
                .and_then(|c| c.parse().ok());
            if let (true, Some(number)) = (is_epsg, number) {
                found = Some(number);
                break;
            }
        }
        gdal_sys::OSRFreeSRSArray(matches);
        gdal_sys::VSIFree(confidences.cast());
        found
    }
}
