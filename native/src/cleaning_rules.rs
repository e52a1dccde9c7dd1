//! The four polygon-cleaning rules over the rows `cleaning` read: gaps filled into the
//! neighbour with the longest border, overlaps kept by the highest-ranked feature, slivers
//! merged into their neighbour, borders snapped in row order.

use std::f64::consts::PI;
use std::sync::Arc;

use arrow::array::{ArrayRef, UInt64Array};
use arrow::compute::{SortColumn, SortOptions, concat, lexsort_to_indices};
use geos::{Geom, Geometry};
use rayon::prelude::*;

use super::NativeError;
use super::cleaning::{Cleaned, Rows, index, near, polygonal, shared_border, union_of};
use super::layer::Layer;
use geomill_planner::plan::ops::clean::OverlapOwner;

/// The row among `candidates` whose geometry `measure` scores highest against `piece` (the
/// earlier row on equal scores); `None` when none scores above 0.
fn best_neighbour(
    piece: &Geometry,
    candidates: &[usize],
    polygons: &[Option<Geometry>],
    measure: impl Fn(&Geometry, &Geometry) -> Result<f64, NativeError>,
) -> Result<Option<usize>, NativeError> {
    let mut best: Option<(usize, f64)> = None;
    for &row in candidates {
        let Some(g) = &polygons[row] else { continue };
        let score = measure(piece, g)?;
        if score > 0.0 && best.is_none_or(|(_, b)| score > b) {
            best = Some((row, score));
        }
    }
    Ok(best.map(|(row, _)| row))
}

/// How near a polygon's outline must pass to a gap's to touch it, in CRS units: the
/// polygons' union moves vertices by rounding, so a gap's outline rarely lies exactly on its
/// neighbours' (GISPulse's measure).
const CONTACT: f64 = 1e-6;

/// How far `neighbour`'s outline runs along `gap`'s: the perimeter of the part of the gap
/// within [`CONTACT`] of it (about twice the border they share; Shapely's buffer of 16
/// segments a quarter circle, as GISPulse measures).
fn contact_length(gap: &Geometry, neighbour: &Geometry) -> Result<f64, NativeError> {
    neighbour
        .buffer(CONTACT, 16)
        .and_then(|near| gap.intersection(&near))
        .and_then(|strip| strip.length())
        .map_err(NativeError::geos)
}

/// Each receiving row's polygon unioned with the pieces given to it.
fn receive(
    rows: &Rows,
    given: Vec<(usize, Geometry)>,
    cleaned: &mut Cleaned,
) -> Result<(), NativeError> {
    let mut by_row: Vec<Vec<Geometry>> = (0..rows.polygons.len()).map(|_| Vec::new()).collect();
    for (row, piece) in given {
        by_row[row].push(piece);
    }
    let unions: Vec<(usize, Geometry)> = by_row
        .into_par_iter()
        .enumerate()
        .filter(|(_, pieces)| !pieces.is_empty())
        .map(|(row, mut pieces)| {
            let own = rows.polygons[row].as_ref().ok_or_else(|| {
                NativeError::Declined(format!("row {row} receives a piece without a polygon"))
            })?;
            pieces.push(Geom::clone(own));
            Ok((row, union_of(pieces)?))
        })
        .collect::<Result<_, NativeError>>()?;
    for (row, g) in unions {
        cleaned.changed[row] = Some(g);
    }
    Ok(())
}

/// Holes of the union of every polygon of at most `max_area`, each unioned into the feature
/// sharing the longest border with it.
pub fn fix_gaps(rows: &Rows, max_area: f64) -> Result<Cleaned, NativeError> {
    let mut cleaned = Cleaned::unchanged(rows.polygons.len());
    let all: Vec<Geometry> = rows.polygons.iter().flatten().map(Geom::clone).collect();
    if all.is_empty() {
        return Ok(cleaned);
    }
    let union = union_of(all)?;
    let mut parts = Vec::new();
    for n in 0..union.get_num_geometries().map_err(NativeError::geos)? {
        parts.push(Some(Geom::clone(
            &union.get_geometry_n(n).map_err(NativeError::geos)?,
        )));
    }
    let part_index = index(&parts)?;
    let mut holes = Vec::new();
    for part in parts.iter().flatten() {
        for r in 0..part.get_num_interior_rings().map_err(NativeError::geos)? {
            let ring = part
                .get_interior_ring_n(u32::try_from(r).unwrap_or(u32::MAX))
                .map_err(NativeError::geos)?;
            holes.push(
                Geometry::create_polygon(Geom::clone(&ring), Vec::new())
                    .map_err(NativeError::geos)?,
            );
        }
    }
    let tree = index(&rows.polygons)?;
    let given: Vec<Option<(usize, Geometry)>> = holes
        .par_iter()
        .map(|hole| {
            // The hole less the polygons lying inside it.
            let inside: Vec<Geometry> = near(&part_index, hole, 0.0)?
                .into_iter()
                .filter_map(|p| parts[p].as_ref().map(Geom::clone))
                .collect();
            let gap = polygonal(
                &hole
                    .difference(&union_of(inside)?)
                    .map_err(NativeError::geos)?,
            )?;
            let area = gap.area().map_err(NativeError::geos)?;
            if gap.is_empty().map_err(NativeError::geos)? || area > max_area {
                return Ok(None);
            }
            let candidates = near(&tree, &gap, CONTACT)?;
            let owner = best_neighbour(&gap, &candidates, &rows.polygons, contact_length)?;
            Ok(owner.map(|row| (row, gap)))
        })
        .collect::<Result<_, NativeError>>()?;
    receive(rows, given.into_iter().flatten().collect(), &mut cleaned)?;
    Ok(cleaned)
}

/// The polygonal rows from the owner of an overlap down (ties by row).
fn ranking(
    layer: &Layer,
    rows: &Rows,
    owner: OverlapOwner,
    order_by: Option<&str>,
) -> Result<Vec<usize>, NativeError> {
    let polygonal_rows = || (0..rows.polygons.len()).filter(|&r| rows.polygons[r].is_some());
    if owner == OverlapOwner::First {
        let Some(field) = order_by else {
            return Ok(polygonal_rows().collect());
        };
        let column = layer.column_index(field)?;
        let arrays: Vec<&dyn arrow::array::Array> = layer
            .batches
            .iter()
            .map(|b| b.column(column).as_ref())
            .collect();
        let values: ArrayRef = if arrays.is_empty() {
            return Ok(Vec::new());
        } else {
            concat(&arrays).map_err(NativeError::arrow)?
        };
        let positions: ArrayRef = Arc::new(UInt64Array::from_iter_values(
            (0..rows.polygons.len()).map(|r| r as u64),
        ));
        let order = lexsort_to_indices(
            &[
                SortColumn {
                    values,
                    options: Some(SortOptions {
                        descending: false,
                        nulls_first: false,
                    }),
                },
                SortColumn {
                    values: positions,
                    options: None,
                },
            ],
            None,
        )
        .map_err(NativeError::arrow)?;
        return Ok(order
            .values()
            .iter()
            .map(|&r| r as usize)
            .filter(|&r| rows.polygons[r].is_some())
            .collect());
    }
    let mut ranked: Vec<(usize, f64)> = polygonal_rows()
        .map(|r| {
            let area = rows.polygons[r]
                .as_ref()
                .map_or(Ok(0.0), |g| g.area().map_err(NativeError::geos))?;
            Ok((
                r,
                if owner == OverlapOwner::Largest {
                    -area
                } else {
                    area
                },
            ))
        })
        .collect::<Result<_, NativeError>>()?;
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    Ok(ranked.into_iter().map(|(r, _)| r).collect())
}

/// Each feature cut by the union of the higher-ranked features whose interiors meet it.
pub fn fix_overlaps(
    layer: &Layer,
    rows: &Rows,
    owner: OverlapOwner,
    order_by: Option<&str>,
) -> Result<Cleaned, NativeError> {
    let mut cleaned = Cleaned::unchanged(rows.polygons.len());
    let mut rank = vec![usize::MAX; rows.polygons.len()];
    for (position, row) in ranking(layer, rows, owner, order_by)?
        .into_iter()
        .enumerate()
    {
        rank[row] = position;
    }
    let tree = index(&rows.polygons)?;
    let cut: Vec<Option<(usize, Geometry)>> = (0..rows.polygons.len())
        .into_par_iter()
        .map(|row| {
            let Some(g) = &rows.polygons[row] else {
                return Ok(None);
            };
            let mut above = Vec::new();
            for other in near(&tree, g, 0.0)? {
                let Some(h) = &rows.polygons[other] else {
                    continue;
                };
                if rank[other] < rank[row]
                    && g.intersects(h).map_err(NativeError::geos)?
                    && !g.touches(h).map_err(NativeError::geos)?
                {
                    above.push(Geom::clone(h));
                }
            }
            if above.is_empty() {
                return Ok(None);
            }
            let rest = g.difference(&union_of(above)?).map_err(NativeError::geos)?;
            Ok(Some((row, polygonal(&rest)?)))
        })
        .collect::<Result<_, NativeError>>()?;
    for (row, g) in cut.into_iter().flatten() {
        cleaned.changed[row] = Some(g);
    }
    Ok(cleaned)
}

/// `4πA/P²`: 1 for a circle, near 0 for a thin strip.
fn thinness(g: &Geometry) -> Result<f64, NativeError> {
    let area = g.area().map_err(NativeError::geos)?;
    let perimeter = g.length().map_err(NativeError::geos)?;
    Ok(if perimeter > 0.0 {
        4.0 * PI * area / (perimeter * perimeter)
    } else {
        0.0
    })
}

/// Features below every threshold given merged into the non-sliver neighbour sharing the
/// longest border; isolated ones kept or removed.
pub fn remove_slivers(
    rows: &Rows,
    max_area: Option<f64>,
    max_thinness: Option<f64>,
    keep_isolated: bool,
) -> Result<Cleaned, NativeError> {
    let mut cleaned = Cleaned::unchanged(rows.polygons.len());
    let mut sliver = vec![false; rows.polygons.len()];
    for (row, g) in rows.polygons.iter().enumerate() {
        let Some(g) = g else { continue };
        let small = max_area.map_or(Ok(true), |m| {
            g.area().map(|a| a < m).map_err(NativeError::geos)
        })?;
        let thin = max_thinness.map_or(Ok(true), |m| thinness(g).map(|t| t < m))?;
        sliver[row] = small && thin;
    }
    let receivers: Vec<Option<Geometry>> = rows
        .polygons
        .iter()
        .zip(&sliver)
        .map(|(g, &s)| if s { None } else { g.as_ref().map(Geom::clone) })
        .collect();
    let tree = index(&receivers)?;
    let targets: Vec<(usize, Option<usize>)> = (0..rows.polygons.len())
        .into_par_iter()
        .filter(|&row| sliver[row])
        .map(|row| {
            let Some(g) = &rows.polygons[row] else {
                return Ok((row, None));
            };
            Ok((
                row,
                best_neighbour(g, &near(&tree, g, 0.0)?, &receivers, shared_border)?,
            ))
        })
        .collect::<Result<_, NativeError>>()?;
    let mut given = Vec::new();
    for (row, target) in targets {
        match (target, &rows.polygons[row]) {
            (Some(target), Some(g)) => {
                given.push((target, Geom::clone(g)));
                cleaned.keep[row] = false;
            }
            _ => cleaned.keep[row] = keep_isolated,
        }
    }
    receive(rows, given, &mut cleaned)?;
    Ok(cleaned)
}

/// Features in row order, each snapped to the snapped features before it within `tolerance`
/// and made valid.
pub fn snap_borders(rows: &Rows, tolerance: f64) -> Result<Cleaned, NativeError> {
    let mut cleaned = Cleaned::unchanged(rows.polygons.len());
    let tree = index(&rows.polygons)?;
    let mut snapped: Vec<Option<Geometry>> = (0..rows.polygons.len()).map(|_| None).collect();
    for (row, g) in rows.polygons.iter().enumerate() {
        let Some(g) = g else { continue };
        let mut reference = Vec::new();
        // A snapped feature lies within `tolerance` of its envelope.
        for other in near(&tree, g, 2.0 * tolerance)? {
            if other >= row {
                continue;
            }
            if let Some(h) = &snapped[other]
                && g.distance(h).map_err(NativeError::geos)? <= tolerance
            {
                reference.push(Geom::clone(h));
            }
        }
        let result = if reference.is_empty() {
            Geom::clone(g)
        } else {
            let all = Geometry::create_geometry_collection(reference).map_err(NativeError::geos)?;
            let moved = g.snap(&all, tolerance).map_err(NativeError::geos)?;
            let moved = if moved.is_valid() {
                moved
            } else {
                moved.make_valid().map_err(NativeError::geos)?
            };
            let result = polygonal(&moved)?;
            cleaned.changed[row] = Some(Geom::clone(&result));
            result
        };
        snapped[row] = Some(result);
    }
    Ok(cleaned)
}
