//! GISPulse's hexagon rows (`hexgrid_create` `layout: offset_rows`): flat-topped hexagons of
//! edge `size` laid row by row from an extent's lower-left corner, positions summed step by
//! step as GISPulse sums them; neighbours in a row overlap.

use std::collections::HashSet;
use std::f64::consts::PI;

use geos::Geom;
use rayon::prelude::*;
use rstar::primitives::{GeomWithData, Rectangle};
use rstar::{AABB, RTree};

use super::NativeError;
use super::geos_base::to_geos;
use super::tessellation::MAX_CELLS;

/// A cell: its column, its row and its closed ring.
pub(super) type Cell = (i64, i64, Vec<[f64; 2]>);

/// The hexagons over `extent` (`[xmin, ymin, xmax, ymax]`), row by row.
pub(super) fn offset_rows(extent: [f64; 4], size: f64) -> Result<Vec<Cell>, NativeError> {
    let [xmin, ymin, xmax, ymax] = extent;
    let h = 3_f64.sqrt() * size;
    let step = 1.5 * size;
    let estimate = ((ymax - ymin) / h + 2.0) * ((xmax - xmin) / step + 2.0);
    if estimate.is_nan() || estimate > MAX_CELLS as f64 {
        return Err(too_many());
    }
    // numpy's linspace(0, 2π, 7)[:-1]: k · (2π / 6).
    let turn = 2.0 * PI / 6.0;
    let offsets: Vec<[f64; 2]> = (0..6)
        .map(|k| {
            let a = f64::from(k) * turn;
            [size * a.cos(), size * a.sin()]
        })
        .collect();
    let mut cells = Vec::new();
    let (mut row, mut y) = (0_i64, ymin);
    while y < ymax + h {
        let (mut x, y_cell) = if row % 2 == 1 {
            (xmin + step * 0.5, y + h * 0.5)
        } else {
            (xmin, y)
        };
        let mut column = 0_i64;
        while x < xmax + step {
            let (cx, cy) = (x + size, y_cell + h / 2.0);
            let mut ring: Vec<[f64; 2]> = offsets.iter().map(|o| [cx + o[0], cy + o[1]]).collect();
            ring.push(ring[0]);
            cells.push((column, row, ring));
            if cells.len() > MAX_CELLS {
                return Err(too_many());
            }
            column += 1;
            x += step;
        }
        row += 1;
        y += h;
    }
    Ok(cells)
}

fn too_many() -> NativeError {
    NativeError::Input(format!(
        "the grid would have more than {MAX_CELLS} cells: give a larger cell size or a smaller extent"
    ))
}

/// The positions in `cells` (polygons as WKB) of those that intersect a geometry of
/// `features` (WKB, non-empty): each feature, in parallel, tests the cells its envelope meets.
pub(super) fn touched(
    cells: &[Vec<u8>],
    features: &[(usize, &[u8], [f64; 4])],
) -> Result<HashSet<usize>, NativeError> {
    let mut boxes = Vec::with_capacity(cells.len());
    for (n, bytes) in cells.iter().enumerate() {
        let g = to_geos(bytes, n)?;
        let (low, high) = super::cleaning::bounds(&g)?;
        boxes.push(GeomWithData::new(Rectangle::from_corners(low, high), n));
    }
    let index = RTree::bulk_load(boxes);
    let hits: Vec<Vec<usize>> = features
        .par_iter()
        .map(|(row, bytes, e)| {
            let feature = to_geos(bytes, *row)?;
            let prepared = feature.to_prepared_geom().map_err(NativeError::geos)?;
            let mut hits = Vec::new();
            for entry in index
                .locate_in_envelope_intersecting(&AABB::from_corners([e[0], e[1]], [e[2], e[3]]))
            {
                let cell = to_geos(&cells[entry.data], entry.data)?;
                if prepared.intersects(&cell).map_err(NativeError::geos)? {
                    hits.push(entry.data);
                }
            }
            Ok(hits)
        })
        .collect::<Result<_, NativeError>>()?;
    Ok(hits.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_gispulse_sums() {
        // Bounds 0,0,200,100, edge 50: 3 rows (y < 100 + h) of 4 (x < 200 + 75).
        let cells = offset_rows([0.0, 0.0, 200.0, 100.0], 50.0).unwrap();
        let rows: Vec<i64> = cells.iter().map(|c| c.1).collect();
        assert_eq!(cells.len(), 12);
        assert_eq!(rows.iter().filter(|&&r| r == 0).count(), 4);
        // Row 0, column 0: centred at (50, h/2), the east vertex first.
        let h = 3_f64.sqrt() * 50.0;
        assert_eq!(cells[0].2[0], [100.0, h / 2.0]);
        assert_eq!(cells[0].2[6], cells[0].2[0]);
        // Odd rows start 0.75 · edge to the east, a whole h up.
        let odd = cells.iter().find(|c| c.1 == 1).unwrap();
        assert_eq!(odd.2[0], [137.5, (h + h * 0.5) + h / 2.0]);
    }
}
