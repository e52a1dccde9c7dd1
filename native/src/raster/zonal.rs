//! Zonal statistics of one raster band under each zone (polygon, line or point), as rasterstats
//! 0.21 computes them: the window of the zone's bounds (floor and ceil of its rows and columns,
//! cells past the raster's edge filled with the file's nodata, or 0 without one), the cells GDAL
//! burns for the zone (their centre inside it, or every cell it touches), less the cells equal to
//! the nodata value and NaN; each statistic with numpy's arithmetic (float32 bands summed in
//! float32, pairwise), zones in parallel, each thread with its own handle on the file.

use std::path::Path;

use gdal::Dataset;
use gdal::vector::Geometry;
use rayon::prelude::*;

use geomill_planner::plan::ops::zonal_stats::ZonalStat;

use super::coverage::{CellType, CellWindow, Rings, coverage, coverage_stats, needs_each_value};
use super::{RasterError, open};
use crate::classify::numpy_sum;

/// The most cells one zone's window may cover (a zone past it is refused by name): its values,
/// masks and sorted copies (about 26 bytes a cell) are held while its statistics are computed,
/// one zone per thread: about 260 MB a thread at most.
pub const MAX_ZONE_CELLS: usize = 10_000_000;

/// rasterstats' nodata value for a raster that declares none.
const DEFAULT_NODATA: f64 = -999.0;

/// How zonal statistics are taken.
#[derive(Debug, Clone)]
pub struct ZonalOptions {
    /// 1-based band.
    pub band: usize,
    pub stats: Vec<ZonalStat>,
    /// Every cell the zone touches, not only those whose centre it contains.
    pub all_touched: bool,
    /// Replaces the file's nodata value.
    pub nodata: Option<f64>,
    /// Weight each cell by the fraction of it the zone covers (exactextract's statistics)
    /// rather than take the cells GDAL burns.
    pub coverage: bool,
}

/// The statistics of each zone (`None`: a NULL or empty zone, or a statistic without a value:
/// every statistic but `count` of a zone without valid cells), in `options.stats` order.
pub fn zonal_stats(
    path: &Path,
    zones: &[Option<&[u8]>],
    options: &ZonalOptions,
) -> Result<Vec<Vec<Option<f64>>>, RasterError> {
    let grid = Grid::of(&open(path)?, options)?;
    zones
        .par_iter()
        .enumerate()
        .map_init(
            || open(path),
            |dataset, (row, zone)| {
                let dataset = dataset
                    .as_ref()
                    .map_err(|e| RasterError::Input(e.to_string()))?;
                let Some(wkb) = zone else {
                    return Ok(vec![None; options.stats.len()]);
                };
                if options.coverage {
                    return grid
                        .zone_coverage(dataset, wkb, options)
                        .map_err(|e| with_zone(e, row));
                }
                let cells = grid
                    .zone_cells(dataset, wkb, options)
                    .map_err(|e| with_zone(e, row))?;
                Ok(match cells {
                    Some(cells) => cells.stats(&options.stats, &grid),
                    None => vec![None; options.stats.len()],
                })
            },
        )
        .collect()
}

fn with_zone(error: RasterError, row: usize) -> RasterError {
    match error {
        RasterError::Input(message) => RasterError::Input(format!("zone {row}: {message}")),
        other => other,
    }
}

/// The raster's grid and band as the statistics need them.
struct Grid {
    width: usize,
    height: usize,
    /// x of the left edge, cell width, y of the top edge, cell height (negative).
    x0: f64,
    dx: f64,
    y0: f64,
    dy: f64,
    /// What cells past the raster's edge read as.
    fill: f64,
    /// The value masked as nodata.
    nodata: f64,
    float32: bool,
    integer: bool,
    /// The value masked in coverage-weighted statistics (exactextract has no default).
    coverage_nodata: Option<f64>,
}

impl Grid {
    fn of(dataset: &Dataset, options: &ZonalOptions) -> Result<Grid, RasterError> {
        let count = dataset.raster_count();
        if options.band == 0 || options.band > count {
            return Err(RasterError::Input(format!(
                "band {} is out of range: the raster has {count} band{}",
                options.band,
                if count == 1 { "" } else { "s" }
            )));
        }
        let t = dataset.geo_transform()?;
        if t[2] != 0.0 || t[4] != 0.0 || t[1] == 0.0 || t[5] == 0.0 {
            return Err(RasterError::Input(
                "a rotated or degenerate geotransform (zonal statistics need a north-up grid)"
                    .into(),
            ));
        }
        let band = dataset.rasterband(options.band)?;
        let file_nodata = band.no_data_value();
        let data_type = band.band_type().name();
        let (width, height) = dataset.raster_size();
        Ok(Grid {
            width,
            height,
            x0: t[0],
            dx: t[1],
            y0: t[3],
            dy: t[5],
            fill: file_nodata.unwrap_or(0.0),
            nodata: options.nodata.or(file_nodata).unwrap_or(DEFAULT_NODATA),
            float32: data_type == "Float32",
            integer: !data_type.starts_with("Float") && !data_type.starts_with("CFloat"),
            coverage_nodata: options.nodata.or(file_nodata),
        })
    }

    /// rasterstats' `rowcol`: the row and column of a point, rounded by `op`.
    fn row_col(&self, x: f64, y: f64, op: fn(f64) -> f64) -> (f64, f64) {
        (op((y - self.y0) / self.dy), op((x - self.x0) / self.dx))
    }

    /// The window, values and burned mask of one zone; `None` for an empty zone.
    fn zone_cells(
        &self,
        dataset: &Dataset,
        wkb: &[u8],
        options: &ZonalOptions,
    ) -> Result<Option<Cells>, RasterError> {
        let bad = |e: geomill_geometry::wkb::WkbError| RasterError::Input(e.to_string());
        let (base, _) = geomill_geometry::wkb::base_type(wkb).map_err(bad)?;
        let geometry = if base == 1 || base == 4 {
            match self.boxed_points(wkb)? {
                Some(boxes) => boxes,
                None => return Ok(None),
            }
        } else {
            Geometry::from_wkb(wkb).map_err(|e| RasterError::Input(e.to_string()))?
        };
        if geometry.is_empty() {
            return Ok(None);
        }
        let e = geometry.envelope();
        let window = self.window_of(e.MinX, e.MinY, e.MaxX, e.MaxY)?;
        let burned = self.burn(&geometry, &window, options.all_touched)?;
        let values = self.read(dataset, &window, options.band)?;
        Ok(Some(Cells { values, burned }))
    }

    /// The coverage-weighted statistics of one polygonal zone (exactextract's), `None` each
    /// for an empty zone.
    fn zone_coverage(
        &self,
        dataset: &Dataset,
        wkb: &[u8],
        options: &ZonalOptions,
    ) -> Result<Vec<Option<f64>>, RasterError> {
        let none = vec![None; options.stats.len()];
        let geometry = Geometry::from_wkb(wkb).map_err(|e| RasterError::Input(e.to_string()))?;
        if geometry.is_empty() {
            return Ok(none);
        }
        let polygons = polygon_rings(&geometry)?;
        let e = geometry.envelope();
        let window = self.window_of(e.MinX, e.MinY, e.MaxX, e.MaxY)?;
        #[allow(clippy::cast_precision_loss)]
        let cells = CellWindow {
            x0: self.x0 + window.col as f64 * self.dx,
            y0: self.y0 + window.row as f64 * self.dy,
            dx: self.dx,
            dy: self.dy,
            cols: window.cols,
            rows: window.rows,
        };
        let fractions = coverage(&polygons, &cells);
        let values = self.read(dataset, &window, options.band)?;
        let (height, width) = (
            i64::try_from(self.height).unwrap_or(i64::MAX),
            i64::try_from(self.width).unwrap_or(i64::MAX),
        );
        let valid: Vec<bool> = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let (r, c) = (
                    window.row + (i / window.cols.max(1)) as i64,
                    window.col + (i % window.cols.max(1)) as i64,
                );
                (0..height).contains(&r)
                    && (0..width).contains(&c)
                    && !v.is_nan()
                    && self.coverage_nodata != Some(*v)
            })
            .collect();
        let cell_type = if self.integer {
            CellType::Integer
        } else if self.float32 {
            CellType::Float32
        } else {
            CellType::Float64
        };
        Ok(coverage_stats(
            &values,
            &fractions,
            &valid,
            &options.stats,
            cell_type,
        ))
    }

    /// The window of a bounding box: floor and ceil of its rows and columns (rasterstats').
    fn window_of(
        &self,
        min_x: f64,
        min_y: f64,
        max_x: f64,
        max_y: f64,
    ) -> Result<Window, RasterError> {
        let (row_start, col_start) = self.row_col(min_x, max_y, f64::floor);
        let (row_stop, col_stop) = self.row_col(max_x, min_y, f64::ceil);
        let rows = row_stop - row_start;
        let cols = col_stop - col_start;
        if !(rows.is_finite() && cols.is_finite()) || rows < 0.0 || cols < 0.0 {
            return Err(RasterError::Input(
                "a zone with non-finite coordinates".into(),
            ));
        }
        if rows * cols > MAX_ZONE_CELLS as f64 {
            return Err(RasterError::Input(format!(
                "the zone's window covers {} cells, more than the {MAX_ZONE_CELLS} a zone may read",
                rows * cols
            )));
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Ok(Window {
            row: row_start as i64,
            col: col_start as i64,
            rows: rows as usize,
            cols: cols as usize,
        })
    }

    /// A point or multipoint as rasterstats' `boxify_points` makes it: each point's cell, 1 %
    /// smaller on every side.
    fn boxed_points(&self, wkb: &[u8]) -> Result<Option<Geometry>, RasterError> {
        let points = Geometry::from_wkb(wkb).map_err(|e| RasterError::Input(e.to_string()))?;
        let mut coordinates = Vec::new();
        if points.geometry_count() == 0 {
            if !points.is_empty() {
                let (x, y, _) = points.get_point(0);
                coordinates.push((x, y));
            }
        } else {
            for i in 0..points.geometry_count() {
                let point = points.get_geometry(i);
                if !point.is_empty() {
                    let (x, y, _) = point.get_point(0);
                    coordinates.push((x, y));
                }
            }
        }
        if coordinates.is_empty() {
            return Ok(None);
        }
        let shrink = 0.01 * self.dx.abs().min(self.dy.abs());
        let boxes: Vec<String> = coordinates
            .into_iter()
            .map(|(x, y)| {
                let (row, col) = self.row_col(x, y, f64::floor);
                let (left, top) = (self.x0 + col * self.dx, self.y0 + row * self.dy);
                let (right, bottom) = (left + self.dx, top + self.dy);
                let (x1, x2) = (left.min(right) + shrink, left.max(right) - shrink);
                let (y1, y2) = (top.min(bottom) + shrink, top.max(bottom) - shrink);
                format!("(({x1} {y1},{x2} {y1},{x2} {y2},{x1} {y2},{x1} {y1}))")
            })
            .collect();
        let wkt = format!("MULTIPOLYGON({})", boxes.join(","));
        Geometry::from_wkt(&wkt)
            .map(Some)
            .map_err(|e| RasterError::Input(e.to_string()))
    }

    /// The cells of `window` GDAL burns for `geometry` (row-major).
    fn burn(
        &self,
        geometry: &Geometry,
        window: &Window,
        all_touched: bool,
    ) -> Result<Vec<bool>, RasterError> {
        #[allow(clippy::cast_precision_loss)]
        let transform = [
            self.x0 + window.col as f64 * self.dx,
            self.dx,
            0.0,
            self.y0 + window.row as f64 * self.dy,
            0.0,
            self.dy,
        ];
        super::write::burn(
            std::slice::from_ref(geometry),
            transform,
            (window.cols, window.rows),
            all_touched,
        )
    }

    /// The band's values over `window` (row-major), cells past the raster's edge as `fill`.
    fn read(
        &self,
        dataset: &Dataset,
        window: &Window,
        band: usize,
    ) -> Result<Vec<f64>, RasterError> {
        let mut values = vec![self.fill; window.rows * window.cols];
        let clamp = |v: i64, high: usize| v.clamp(0, i64::try_from(high).unwrap_or(i64::MAX));
        let (r0, r1) = (
            clamp(window.row, self.height),
            clamp(window.row + window.rows as i64, self.height),
        );
        let (c0, c1) = (
            clamp(window.col, self.width),
            clamp(window.col + window.cols as i64, self.width),
        );
        if r1 <= r0 || c1 <= c0 {
            return Ok(values);
        }
        #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
        let (rows, cols) = ((r1 - r0) as usize, (c1 - c0) as usize);
        #[allow(clippy::cast_possible_truncation)]
        let inside = dataset.rasterband(band)?.read_as::<f64>(
            (c0 as isize, r0 as isize),
            (cols, rows),
            (cols, rows),
            None,
        )?;
        #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
        let (row_offset, col_offset) = ((r0 - window.row) as usize, (c0 - window.col) as usize);
        for (r, source) in inside.data().chunks(cols).enumerate() {
            let start = (row_offset + r) * window.cols + col_offset;
            values[start..start + cols].copy_from_slice(source);
        }
        Ok(values)
    }
}

/// A window of the raster's grid (its first row and column may be outside the raster).
struct Window {
    row: i64,
    col: i64,
    rows: usize,
    cols: usize,
}

/// One zone's window: every value, and whether the zone burned the cell.
struct Cells {
    values: Vec<f64>,
    burned: Vec<bool>,
}

impl Cells {
    fn stats(&self, stats: &[ZonalStat], grid: &Grid) -> Vec<Option<f64>> {
        let valid: Vec<bool> = self
            .values
            .iter()
            .zip(&self.burned)
            .map(|(v, &burned)| burned && *v != grid.nodata && !v.is_nan())
            .collect();
        let kept: Vec<f64> = self
            .values
            .iter()
            .zip(&valid)
            .filter_map(|(v, &ok)| ok.then_some(*v))
            .collect();
        // Sorted only for the statistics that need the order (the sort is most of the time of
        // a zone otherwise); values equal under `total_cmp` are the same bits, so an unstable
        // sort gives the same order.
        let needs_order = needs_each_value(stats);
        let mut sorted = Vec::new();
        if needs_order {
            sorted = kept.clone();
            sorted.sort_unstable_by(f64::total_cmp);
        }
        let distinct = distinct_counts(&sorted);
        let min = kept.iter().copied().min_by(f64::total_cmp);
        let max = kept.iter().copied().max_by(f64::total_cmp);
        stats
            .iter()
            .map(|stat| match stat {
                ZonalStat::Nodata => Some(self.burned_where(|v| v == grid.nodata)),
                ZonalStat::Nan => Some(self.burned_where(f64::is_nan)),
                ZonalStat::Count => Some(kept.len() as f64),
                _ if kept.is_empty() => None,
                ZonalStat::Min => min,
                ZonalStat::Max => max,
                ZonalStat::Range => max.zip(min).map(|(high, low)| high - low),
                ZonalStat::Sum => Some(self.sum(&valid, grid)),
                ZonalStat::Mean => Some(self.sum(&valid, grid) / kept.len() as f64),
                ZonalStat::Std => Some(self.std(&valid, grid, kept.len())),
                ZonalStat::Median => Some(median(&sorted, grid)),
                ZonalStat::Percentile(q) => Some(percentile(&sorted, *q, grid)),
                ZonalStat::Unique => Some(distinct.len() as f64),
                ZonalStat::Majority => pick(&distinct, |a, b| a > b),
                ZonalStat::Minority => pick(&distinct, |a, b| a < b),
            })
            .collect()
    }

    /// How many burned cells satisfy `test`.
    fn burned_where(&self, test: impl Fn(f64) -> bool) -> f64 {
        let n = self
            .values
            .iter()
            .zip(&self.burned)
            .filter(|(v, burned)| **burned && test(**v))
            .count();
        n as f64
    }

    /// numpy's `masked.sum()`: the window with masked cells as 0, summed pairwise in the band's
    /// type (exactly in 64-bit integers for an integer band).
    fn sum(&self, valid: &[bool], grid: &Grid) -> f64 {
        let filled = self
            .values
            .iter()
            .zip(valid)
            .map(|(v, &ok)| if ok { *v } else { 0.0 });
        if grid.integer {
            #[allow(clippy::cast_possible_truncation)]
            return filled.map(|v| v as i64).sum::<i64>() as f64;
        }
        if grid.float32 {
            #[allow(clippy::cast_possible_truncation)]
            let values: Vec<f32> = filled.map(|v| v as f32).collect();
            return f64::from(numpy_sum(&values));
        }
        numpy_sum(&filled.collect::<Vec<f64>>())
    }

    /// numpy's `masked.std()`: the squared anomalies from the mean (in float64), masked cells 0,
    /// summed pairwise, over the count.
    fn std(&self, valid: &[bool], grid: &Grid, count: usize) -> f64 {
        let mean = self.sum(valid, grid) / count as f64;
        let squares: Vec<f64> = self
            .values
            .iter()
            .zip(valid)
            .map(|(v, &ok)| if ok { (v - mean) * (v - mean) } else { 0.0 })
            .collect();
        (numpy_sum(&squares) / count as f64).sqrt()
    }
}

/// Each distinct value of `sorted` with how many times it occurs, ascending.
fn distinct_counts(sorted: &[f64]) -> Vec<(f64, usize)> {
    let mut out: Vec<(f64, usize)> = Vec::new();
    for &v in sorted {
        match out.last_mut() {
            Some((last, n)) if *last == v => *n += 1,
            _ => out.push((v, 1)),
        }
    }
    out
}

/// The value whose count `better` prefers, the smallest on ties (rasterstats' `key_assoc_val`).
fn pick(distinct: &[(f64, usize)], better: impl Fn(usize, usize) -> bool) -> Option<f64> {
    let mut best: Option<(f64, usize)> = None;
    for &(v, n) in distinct {
        if best.is_none_or(|(_, m)| better(n, m)) {
            best = Some((v, n));
        }
    }
    best.map(|(v, _)| v)
}

/// `np.median`: the middle value, or the mean of the two middle ones in the band's type.
fn median(sorted: &[f64], grid: &Grid) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        return sorted[n / 2];
    }
    let (a, b) = (sorted[n / 2 - 1], sorted[n / 2]);
    if grid.float32 {
        #[allow(clippy::cast_possible_truncation)]
        return f64::from((a as f32 + b as f32) / 2.0);
    }
    (a + b) / 2.0
}

/// `np.percentile(values, q)` (linear, `q` a Python number): between the ranks around
/// `(n - 1) q / 100`, numpy's `_lerp` with the weight `t` (from the upper value when `t` is at
/// least a half); for a float32 band in float32, `t` and `1 - t` rounded to it from float64.
fn percentile(sorted: &[f64], q: f64, grid: &Grid) -> f64 {
    let index = (sorted.len() - 1) as f64 * (q / 100.0);
    let below = index.floor();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let i = (below as usize).min(sorted.len() - 1);
    let (a, b) = (sorted[i], sorted[(i + 1).min(sorted.len() - 1)]);
    let t = index - below;
    if grid.float32 {
        #[allow(clippy::cast_possible_truncation)]
        let (a, b) = (a as f32, b as f32);
        let diff = b - a;
        #[allow(clippy::cast_possible_truncation)]
        let value = if t >= 0.5 {
            b - diff * (1.0 - t) as f32
        } else {
            a + diff * t as f32
        };
        return f64::from(value);
    }
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

/// The rings of a polygon or multipolygon (coverage-weighted statistics need areas: another
/// geometry is refused).
fn polygon_rings(geometry: &Geometry) -> Result<Vec<Rings>, RasterError> {
    use gdal::vector::OGRwkbGeometryType::{wkbMultiPolygon, wkbPolygon};
    let rings_of = |polygon: &Geometry| -> Rings {
        (0..polygon.geometry_count())
            .map(|i| {
                let mut points = Vec::new();
                polygon.get_geometry(i).get_points(&mut points);
                points.into_iter().map(|(x, y, _)| (x, y)).collect()
            })
            .collect()
    };
    let flat = gdal::vector::geometry_type_flatten(geometry.geometry_type());
    if flat == wkbPolygon {
        Ok(vec![rings_of(geometry)])
    } else if flat == wkbMultiPolygon {
        Ok((0..geometry.geometry_count())
            .map(|i| rings_of(&geometry.get_geometry(i)))
            .collect())
    } else {
        Err(RasterError::Input(format!(
            "coverage-weighted statistics need polygons, not a {}",
            geometry.geometry_name()
        )))
    }
}
