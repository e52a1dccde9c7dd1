//! Duplicate geometries paired in input order: each duplicate once, against the first row it
//! duplicates, by well-known text (as GEOS writes it) or, with a tolerance, claimed greedily
//! by minimum distance.

use std::collections::HashMap;
use std::fmt::Write;

use geos::{Geom, Geometry, GeometryTypes};
use rstar::AABB;

use super::{Problem, Rows};
use crate::NativeError;
use crate::cleaning::{bounds, index};

/// The duplicates of `rows`: `feature` the duplicate (with its geometry), `related` the first
/// row it duplicates.
pub(super) fn first_in_row_order(rows: &Rows, tolerance: f64) -> Result<Vec<Problem>, NativeError> {
    let geometries = rows.geometries()?;
    if tolerance > 0.0 {
        return claimed_within(rows, &geometries, tolerance);
    }
    let mut first: HashMap<String, usize> = HashMap::new();
    let mut problems = Vec::new();
    for (row, g) in geometries.iter().enumerate() {
        let Some(g) = g else { continue };
        let mut text = String::new();
        well_known_text(g, &mut text)?;
        match first.get(&text) {
            Some(&earlier) => problems.push(Problem {
                feature: row,
                related: Some(earlier),
                field: None,
                value: None,
                problem: "duplicate",
                reason: format!("the geometry prints as row {earlier}'s does"),
                geom: rows.wkb[row].clone(),
            }),
            None => {
                first.insert(text, row);
            }
        }
    }
    Ok(problems)
}

/// Each row in order, unless claimed, claims every later unclaimed row at most `tolerance`
/// from it (GEOS distance; NULL and empty rows take no part).
fn claimed_within(
    rows: &Rows,
    geometries: &[Option<Geometry>],
    tolerance: f64,
) -> Result<Vec<Problem>, NativeError> {
    let mut present = Vec::with_capacity(geometries.len());
    for g in geometries {
        present.push(match g {
            Some(g) if !g.is_empty().map_err(NativeError::geos)? => Some(Geom::clone(g)),
            _ => None,
        });
    }
    let tree = index(&present)?;
    let mut claimed = vec![false; present.len()];
    let mut problems = Vec::new();
    for (i, g) in present.iter().enumerate() {
        let Some(g) = g else { continue };
        if claimed[i] {
            continue;
        }
        let (low, high) = bounds(g)?;
        let reach = AABB::from_corners(
            [low[0] - tolerance, low[1] - tolerance],
            [high[0] + tolerance, high[1] + tolerance],
        );
        let mut candidates: Vec<usize> = tree
            .locate_in_envelope_intersecting(&reach)
            .map(|entry| entry.data)
            .filter(|&j| j > i && !claimed[j])
            .collect();
        candidates.sort_unstable();
        for j in candidates {
            let Some(other) = &present[j] else { continue };
            let distance = g.distance(other).map_err(NativeError::geos)?;
            if distance <= tolerance {
                claimed[j] = true;
                problems.push(Problem {
                    feature: j,
                    related: Some(i),
                    field: None,
                    value: None,
                    problem: "near_duplicate",
                    reason: format!("the geometry lies {distance} from row {i}'s"),
                    geom: rows.wkb[j].clone(),
                });
            }
        }
    }
    Ok(problems)
}

/// A number as GEOS's WKT writer prints it with full precision and trimming: for magnitudes
/// from 1e-4 below 1e17 the shortest round-trip digits in fixed notation, rounded to 16
/// decimals when they run longer; otherwise the shortest scientific form. Negative zero
/// prints as `0`.
fn wkt_number(v: f64, out: &mut String) {
    let magnitude = v.abs();
    if v == 0.0 {
        out.push('0');
    } else if (1e-4..1e17).contains(&magnitude) {
        // The shortest round-trip digits, rounded to 16 decimals when they run longer.
        let shortest = format!("{v}");
        let decimals = shortest.split_once('.').map_or(0, |(_, f)| f.len());
        if decimals > 16 {
            let fixed = format!("{v:.16}");
            out.push_str(fixed.trim_end_matches('0').trim_end_matches('.'));
        } else {
            out.push_str(&shortest);
        }
    } else {
        let _ = write!(out, "{v:e}");
    }
}

fn coordinates(g: &impl Geom, out: &mut String) -> Result<(), NativeError> {
    let seq = g.get_coord_seq().map_err(NativeError::geos)?;
    let z = g.has_z().map_err(NativeError::geos)?;
    out.push('(');
    for i in 0..seq.size().map_err(NativeError::geos)? {
        if i > 0 {
            out.push(',');
        }
        wkt_number(seq.get_x(i).map_err(NativeError::geos)?, out);
        out.push(' ');
        wkt_number(seq.get_y(i).map_err(NativeError::geos)?, out);
        if z {
            out.push(' ');
            wkt_number(seq.get_z(i).map_err(NativeError::geos)?, out);
        }
    }
    out.push(')');
    Ok(())
}

/// The geometry's well-known text as GEOS writes it (up to spacing): its type, Z when it has
/// one, and each coordinate by [`wkt_number`]; two geometries print the same exactly when
/// this does.
fn well_known_text(g: &impl Geom, out: &mut String) -> Result<(), NativeError> {
    let kind = g.geometry_type();
    let _ = write!(out, "{kind:?}");
    if g.has_z().map_err(NativeError::geos)? {
        out.push_str(" Z");
    }
    if g.is_empty().map_err(NativeError::geos)? {
        out.push_str(" EMPTY");
        return Ok(());
    }
    match kind {
        GeometryTypes::Point | GeometryTypes::LineString | GeometryTypes::LinearRing => {
            coordinates(g, out)
        }
        GeometryTypes::Polygon => {
            out.push('(');
            coordinates(&g.get_exterior_ring().map_err(NativeError::geos)?, out)?;
            for n in 0..g.get_num_interior_rings().map_err(NativeError::geos)? {
                out.push(',');
                let n = u32::try_from(n)
                    .map_err(|_| NativeError::Input("a polygon of too many rings".into()))?;
                coordinates(&g.get_interior_ring_n(n).map_err(NativeError::geos)?, out)?;
            }
            out.push(')');
            Ok(())
        }
        _ => {
            out.push('(');
            for n in 0..g.get_num_geometries().map_err(NativeError::geos)? {
                if n > 0 {
                    out.push(',');
                }
                well_known_text(&g.get_geometry_n(n).map_err(NativeError::geos)?, out)?;
            }
            out.push(')');
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn printed(v: f64) -> String {
        let mut out = String::new();
        wkt_number(v, &mut out);
        out
    }

    /// Shapely 2.2 (GEOS 3.14) prints these points' x so: `Point(v, 1).wkt`.
    #[test]
    fn numbers_print_as_geos_writes_them() {
        for (v, text) in [
            (0.1 + 0.2, "0.3"),
            (1.0000000000000002, "1.0000000000000002"),
            (123456.789_012_345_67, "123456.78901234567"),
            (0.001_234_567_890_123_456_7, "0.0012345678901235"),
            (0.000_123_456_789_012_345_67, "0.0001234567890123"),
            (1e16, "10000000000000000"),
            (-0.0, "0"),
            (-1e-17, "-1e-17"),
            (9.9999e-5, "9.9999e-5"),
            (1e17, "1e17"),
        ] {
            let mine = printed(v);
            // GEOS writes `1e+17` where Rust writes `1e17`: the same value, printed once.
            assert_eq!(mine.replace("e+", "e"), text.replace("e+", "e"), "{v:?}");
        }
    }

    #[test]
    fn same_text_means_same_type_and_coordinates() {
        let text = |wkt: &str| {
            let mut out = String::new();
            well_known_text(&Geometry::new_from_wkt(wkt).unwrap(), &mut out).unwrap();
            out
        };
        assert_eq!(text("POINT (0.30000000000000004 1)"), text("POINT (0.3 1)"));
        assert_ne!(text("POINT (1.0000000000000002 1)"), text("POINT (1 1)"));
        assert_ne!(text("MULTIPOINT ((1 1))"), text("POINT (1 1)"));
        assert_ne!(
            text("POLYGON ((0 0, 1 0, 1 1, 0 0))"),
            text("POLYGON ((1 0, 1 1, 0 0, 1 0))")
        );
        assert_eq!(text("POLYGON EMPTY"), text("POLYGON EMPTY"));
        assert_ne!(text("POLYGON EMPTY"), text("LINESTRING EMPTY"));
    }
}
