//! Map tiles of a raster: 256 × 256 PNGs in Web Mercator (the XYZ scheme of web maps), warped
//! by GDAL from the raster (from its overviews when zoomed out), one band through a colour ramp
//! or three bands as red, green and blue; nodata, NaN and cells outside the raster transparent.

use std::path::Path;

use gdal::raster::RasterBand;
use gdal::spatial_ref::SpatialRef;
use gdal::{Dataset, DriverManager};

use super::ffi::{suggested_grid, warp_into};
use super::{RasterError, open};

/// Pixels along a tile's side.
pub const TILE_SIZE: usize = 256;
/// Half the side of Web Mercator's square world, in metres.
const HALF_WORLD: f64 = 20_037_508.342_789_244;
/// The deepest zoom level a tile is drawn at.
pub const MAX_ZOOM: u32 = 22;

/// A colour ramp for one band: stops of (position in 0..=1, RGB), interpolated linearly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ramp {
    Viridis,
    Magma,
    Terrain,
    Greys,
}

impl Ramp {
    /// The ramps by name, for the query parameter and its error message.
    pub const NAMES: [(&'static str, Ramp); 4] = [
        ("viridis", Ramp::Viridis),
        ("magma", Ramp::Magma),
        ("terrain", Ramp::Terrain),
        ("greys", Ramp::Greys),
    ];

    /// The ramp called `name`.
    pub fn named(name: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, ramp)| *ramp)
    }

    fn stops(self) -> &'static [(f64, [u8; 3])] {
        match self {
            // matplotlib's viridis and magma at ninths.
            Ramp::Viridis => &[
                (0.0, [68, 1, 84]),
                (0.125, [71, 45, 123]),
                (0.25, [59, 82, 139]),
                (0.375, [44, 114, 142]),
                (0.5, [33, 145, 140]),
                (0.625, [40, 174, 128]),
                (0.75, [94, 201, 98]),
                (0.875, [173, 220, 48]),
                (1.0, [253, 231, 37]),
            ],
            Ramp::Magma => &[
                (0.0, [0, 0, 4]),
                (0.125, [28, 16, 68]),
                (0.25, [79, 18, 123]),
                (0.375, [129, 37, 129]),
                (0.5, [181, 54, 122]),
                (0.625, [229, 80, 100]),
                (0.75, [251, 135, 97]),
                (0.875, [254, 194, 135]),
                (1.0, [252, 253, 191]),
            ],
            // matplotlib's terrain: sea blue, green lowlands, yellow, brown, white peaks.
            Ramp::Terrain => &[
                (0.0, [51, 51, 153]),
                (0.15, [0, 153, 255]),
                (0.25, [0, 204, 102]),
                (0.5, [255, 255, 153]),
                (0.75, [128, 92, 84]),
                (1.0, [255, 255, 255]),
            ],
            Ramp::Greys => &[(0.0, [0, 0, 0]), (1.0, [255, 255, 255])],
        }
    }

    /// The colour at `t` (clamped to 0..=1).
    pub fn colour(self, t: f64) -> [u8; 3] {
        let stops = self.stops();
        let t = t.clamp(0.0, 1.0);
        let upper = stops
            .iter()
            .position(|(at, _)| *at >= t)
            .unwrap_or(stops.len() - 1)
            .max(1);
        let ((a, low), (b, high)) = (stops[upper - 1], stops[upper]);
        let f = if b > a { (t - a) / (b - a) } else { 0.0 };
        std::array::from_fn(|i| {
            (f64::from(low[i]) + f * (f64::from(high[i]) - f64::from(low[i]))).round() as u8
        })
    }
}

/// How cells are picked for a tile's pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TileResampling {
    Nearest,
    Bilinear,
}

/// How a tile is drawn: one band through `ramp`, or three as RGB; each band's values stretched
/// from its range's low end (the ramp's start, darkest) to its high end (its end, brightest).
#[derive(Debug, Clone, PartialEq)]
pub struct TileStyle {
    /// 1-based band numbers: one, or three (red, green, blue).
    pub bands: Vec<usize>,
    /// A (low, high) range per band.
    pub ranges: Vec<(f64, f64)>,
    pub ramp: Ramp,
    pub resampling: TileResampling,
}

/// Where a raster lies on a web map.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Footprint {
    /// West, south, east, north in longitude and latitude.
    pub lonlat: [f64; 4],
    /// The same in Web Mercator metres.
    pub mercator: [f64; 4],
    /// The zoom level at which a tile's pixel is no larger than the raster's cells.
    pub native_zoom: u32,
}

fn wkt_of(code: u32) -> Result<String, RasterError> {
    SpatialRef::from_epsg(code)
        .and_then(|srs| srs.to_wkt())
        .map_err(RasterError::Gdal)
}

/// The bounds of a grid `(transform, columns, rows)` (north-up).
fn grid_bounds((t, width, height): ([f64; 6], usize, usize)) -> [f64; 4] {
    super::write::bounds_of(&t, width, height)
}

/// Where the raster at `path` lies on a web map.
pub fn footprint(path: &Path) -> Result<Footprint, RasterError> {
    let dataset = open(path)?;
    footprint_of(&dataset)
}

fn footprint_of(dataset: &Dataset) -> Result<Footprint, RasterError> {
    let mercator_grid = suggested_grid(dataset, &wkt_of(3857)?)?;
    let lonlat = grid_bounds(suggested_grid(dataset, &wkt_of(4326)?)?);
    let cell = mercator_grid.0[1].abs().max(f64::MIN_POSITIVE);
    // A tile's pixel at zoom z is 2 * HALF_WORLD / (256 * 2^z) metres.
    let zoom = (2.0 * HALF_WORLD / (TILE_SIZE as f64 * cell)).log2().ceil();
    let native_zoom = zoom.clamp(0.0, f64::from(MAX_ZOOM)) as u32;
    Ok(Footprint {
        lonlat,
        mercator: grid_bounds(mercator_grid),
        native_zoom,
    })
}

/// Tile `z/x/y`'s bounds in Web Mercator metres (west, south, east, north).
pub fn tile_bounds((z, x, y): (u32, u32, u32)) -> [f64; 4] {
    let side = 2.0 * HALF_WORLD / f64::from(1_u32 << z.min(31));
    let west = -HALF_WORLD + f64::from(x) * side;
    let north = HALF_WORLD - f64::from(y) * side;
    [west, north - side, west + side, north]
}

/// The bands a tile draws by default: 1-3 when the raster marks them red, green and blue,
/// else band 1 (through a ramp).
pub fn default_bands(path: &Path) -> Result<Vec<usize>, RasterError> {
    use gdal::raster::ColorInterpretation as Colour;
    let dataset = open(path)?;
    let colour = |index: usize| {
        dataset
            .rasterband(index)
            .map(|band| band.color_interpretation())
            .ok()
    };
    let rgb = dataset.raster_count() >= 3
        && colour(1) == Some(Colour::RedBand)
        && colour(2) == Some(Colour::GreenBand)
        && colour(3) == Some(Colour::BlueBand);
    Ok(if rgb { vec![1, 2, 3] } else { vec![1] })
}

/// The default range of each of `bands`: its values' 2nd to 98th percentile (QGIS's cumulative
/// count cut), from GDAL's approximate histogram (overviews, or a sample of blocks), so that a
/// few outliers do not wash the picture out. Deterministic for a file.
pub fn default_ranges(path: &Path, bands: &[usize]) -> Result<Vec<(f64, f64)>, RasterError> {
    let dataset = open(path)?;
    check_bands(&dataset, bands)?;
    bands
        .iter()
        .map(|&index| cumulative_cut(&dataset.rasterband(index)?))
        .collect()
}

fn cumulative_cut(band: &RasterBand<'_>) -> Result<(f64, f64), RasterError> {
    const BUCKETS: usize = 1024;
    let Ok(extremes) = band.compute_raster_min_max(true) else {
        // Every cell is nodata: any range draws nothing.
        return Ok((0.0, 1.0));
    };
    let (min, max) = (extremes.min, extremes.max);
    if !(min.is_finite() && max.is_finite()) || max <= min {
        return Ok((min, min + 1.0));
    }
    let histogram = band.histogram(min, max, BUCKETS, false, true)?;
    let counts = histogram.counts();
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return Ok((min, max));
    }
    let width = (max - min) / BUCKETS as f64;
    let at = |share: f64| {
        let wanted = share * total as f64;
        let mut seen = 0_u64;
        for (i, count) in counts.iter().enumerate() {
            seen += count;
            if seen as f64 >= wanted {
                return min + (i as f64 + 0.5) * width;
            }
        }
        max
    };
    let (low, high) = (at(0.02), at(0.98));
    Ok(if high > low { (low, high) } else { (min, max) })
}

fn check_bands(dataset: &Dataset, bands: &[usize]) -> Result<(), RasterError> {
    let count = dataset.raster_count();
    if bands.len() != 1 && bands.len() != 3 {
        return Err(RasterError::Input(format!(
            "bands: {} given; a tile draws one band (with a colour ramp) or three (red, green, blue)",
            bands.len()
        )));
    }
    if let Some(band) = bands.iter().find(|b| **b == 0 || **b > count) {
        return Err(RasterError::Input(format!(
            "band {band} is out of range: the raster has {count} band{}",
            if count == 1 { "" } else { "s" }
        )));
    }
    Ok(())
}

/// Draws tile `z/x/y` of the raster at `path` as a PNG (RGBA); a tile away from the raster is
/// transparent.
pub fn render(
    path: &Path,
    zxy: (u32, u32, u32),
    style: &TileStyle,
) -> Result<Vec<u8>, RasterError> {
    let dataset = open(path)?;
    check_bands(&dataset, &style.bands)?;
    if style.ranges.len() != style.bands.len() {
        return Err(RasterError::Input(format!(
            "{} ranges for {} bands: give one (low, high) range per band",
            style.ranges.len(),
            style.bands.len()
        )));
    }
    let bounds = tile_bounds(zxy);
    // A raster GDAL cannot place in Web Mercator is warped all the same (the warper says why).
    let inside = match footprint_of(&dataset) {
        Ok(footprint) => overlaps(&footprint.mercator, &bounds),
        Err(_) => true,
    };
    let mut rgba = vec![0_u8; TILE_SIZE * TILE_SIZE * 4];
    if inside {
        draw(&dataset, bounds, style, &mut rgba)?;
    }
    encode_png(&rgba)
}

fn overlaps(a: &[f64; 4], b: &[f64; 4]) -> bool {
    a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3]
}

/// Warps every band into a tile-sized canvas (GDAL's warper marks in an alpha band which
/// pixels a valid cell reached), then colours the chosen ones into `rgba`.
fn draw(
    dataset: &Dataset,
    [west, south, east, north]: [f64; 4],
    style: &TileStyle,
    rgba: &mut [u8],
) -> Result<(), RasterError> {
    let count = dataset.raster_count();
    let mem = DriverManager::get_driver_by_name("MEM")?;
    let mut canvas = mem.create_with_band_type::<f64, _>("", TILE_SIZE, TILE_SIZE, count + 1)?;
    let pixel = (east - west) / TILE_SIZE as f64;
    let line = (north - south) / TILE_SIZE as f64;
    canvas.set_geo_transform(&[west, pixel, 0.0, north, 0.0, -line])?;
    canvas.set_projection(&wkt_of(3857)?)?;
    let resampling = match style.resampling {
        TileResampling::Nearest => "near",
        TileResampling::Bilinear => "bilinear",
    };
    let arguments: Vec<String> = ["-r", resampling, "-dstalpha", "-wo", "NUM_THREADS=1"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    warp_into(dataset, &canvas, &arguments)?;
    let size = (TILE_SIZE, TILE_SIZE);
    let read = |index: usize| -> Result<Vec<f64>, RasterError> {
        Ok(canvas
            .rasterband(index)?
            .read_as::<f64>((0, 0), size, size, None)?
            .into_shape_and_vec()
            .1)
    };
    let alpha = read(count + 1)?;
    let values: Vec<Vec<f64>> = style
        .bands
        .iter()
        .map(|b| read(*b))
        .collect::<Result<_, _>>()?;
    let scaled = |band: usize, value: f64| {
        // A reversed range (high below low) reverses the ramp.
        let (low, high) = style.ranges[band];
        if high != low {
            (value - low) / (high - low)
        } else {
            0.5
        }
    };
    for (i, pixel) in rgba.chunks_exact_mut(4).enumerate() {
        let drawn = values.iter().all(|v| v[i].is_finite()) && alpha[i] > 0.0;
        if !drawn {
            continue;
        }
        let colour = if values.len() == 1 {
            style.ramp.colour(scaled(0, values[0][i]))
        } else {
            std::array::from_fn(|c| (scaled(c, values[c][i]).clamp(0.0, 1.0) * 255.0).round() as u8)
        };
        pixel[..3].copy_from_slice(&colour);
        pixel[3] = alpha[i].clamp(0.0, 255.0).round() as u8;
    }
    Ok(())
}

fn encode_png(rgba: &[u8]) -> Result<Vec<u8>, RasterError> {
    let mut bytes = Vec::new();
    let side = TILE_SIZE as u32;
    let mut encoder = png::Encoder::new(&mut bytes, side, side);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let encoded = encoder
        .write_header()
        .and_then(|mut writer| writer.write_image_data(rgba));
    encoded.map_err(|e| RasterError::Input(format!("encoding the tile as PNG: {e}")))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramps_run_from_their_first_stop_to_their_last() {
        assert_eq!(Ramp::Viridis.colour(0.0), [68, 1, 84]);
        assert_eq!(Ramp::Viridis.colour(1.0), [253, 231, 37]);
        assert_eq!(Ramp::Viridis.colour(-3.0), [68, 1, 84]);
        assert_eq!(Ramp::Greys.colour(0.5), [128, 128, 128]);
        assert_eq!(Ramp::Terrain.colour(0.5), [255, 255, 153]);
        assert_eq!(Ramp::named("magma"), Some(Ramp::Magma));
        assert_eq!(Ramp::named("jet"), None);
    }

    #[test]
    fn tiles_split_the_mercator_square() {
        let world = tile_bounds((0, 0, 0));
        assert!((world[0] + HALF_WORLD).abs() < 1e-6 && (world[3] - HALF_WORLD).abs() < 1e-6);
        let [west, south, east, north] = tile_bounds((1, 1, 1));
        assert!(west.abs() < 1e-6 && north.abs() < 1e-6);
        assert!((east - HALF_WORLD).abs() < 1e-6 && (south + HALF_WORLD).abs() < 1e-6);
    }
}
