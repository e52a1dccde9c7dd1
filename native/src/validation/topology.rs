//! Topology checked with Shapely's predicates, as a GeoPandas script applies them: each row
//! in input order through GEOS's `isValid` and `isSimple`, then every pair of polygons whose
//! boxes meet through GEOS's `overlaps`.

use geos::{Geom, Geometry, GeometryTypes};
use rstar::AABB;

use super::{Problem, Rows};
use crate::NativeError;
use crate::cleaning::{bounds, index};
use crate::geos_base::to_wkb;
use geomill_planner::plan::validate::TopologyProblem;

/// The problems `checks` asks for: per row (NULL, empty, invalid, not simple), then the
/// overlapping polygon pairs.
pub(super) fn shapely_topology(
    rows: &Rows,
    checks: &[TopologyProblem],
) -> Result<Vec<Problem>, NativeError> {
    let geometries = rows.geometries()?;
    let asked = |c: TopologyProblem| checks.contains(&c);
    let mut problems = Vec::new();
    let mut found = |feature, problem, reason: String, geom: Option<Vec<u8>>| {
        problems.push(Problem {
            feature,
            related: None,
            problem,
            field: None,
            value: None,
            reason,
            geom,
        });
    };
    for (row, g) in geometries.iter().enumerate() {
        let Some(g) = g else {
            if asked(TopologyProblem::NullGeometry) {
                found(row, "null_geometry", "the geometry is NULL".into(), None);
            }
            continue;
        };
        let feature = || rows.wkb[row].clone();
        if asked(TopologyProblem::EmptyGeometry) && g.is_empty().map_err(NativeError::geos)? {
            found(
                row,
                "empty_geometry",
                "the geometry is empty".into(),
                feature(),
            );
        }
        if asked(TopologyProblem::Invalid) && !g.is_valid() {
            let reason = g.is_valid_reason().map_err(NativeError::geos)?;
            found(row, "invalid", reason, feature());
        }
        if asked(TopologyProblem::SelfIntersection) && !g.is_simple().map_err(NativeError::geos)? {
            found(
                row,
                "self_intersection",
                "the geometry is not simple".into(),
                feature(),
            );
        }
    }
    if asked(TopologyProblem::Overlap) {
        problems.extend(overlaps(&geometries)?);
    }
    Ok(problems)
}

/// The polygons (Polygon and MultiPolygon rows, valid or not, not empty) as `overlaps` reads
/// them: the others `None`.
fn polygons(geometries: &[Option<Geometry>]) -> Result<Vec<Option<Geometry>>, NativeError> {
    let mut out = Vec::with_capacity(geometries.len());
    for g in geometries {
        out.push(match g {
            Some(g)
                if matches!(
                    g.geometry_type(),
                    GeometryTypes::Polygon | GeometryTypes::MultiPolygon
                ) && !g.is_empty().map_err(NativeError::geos)? =>
            {
                Some(Geom::clone(g))
            }
            _ => None,
        });
    }
    Ok(out)
}

/// Each pair of polygons i < j that overlap, with their intersection and its area.
fn overlaps(geometries: &[Option<Geometry>]) -> Result<Vec<Problem>, NativeError> {
    let polygons = polygons(geometries)?;
    let tree = index(&polygons)?;
    let mut problems = Vec::new();
    for (i, a) in polygons.iter().enumerate() {
        let Some(a) = a else { continue };
        let (low, high) = bounds(a)?;
        let mut candidates: Vec<usize> = tree
            .locate_in_envelope_intersecting(&AABB::from_corners(low, high))
            .map(|entry| entry.data)
            .filter(|&j| j > i)
            .collect();
        candidates.sort_unstable();
        for j in candidates {
            let Some(b) = &polygons[j] else { continue };
            let failed = |e: geos::Error| {
                NativeError::Input(format!(
                    "GEOS cannot compare the polygons of rows {i} and {j} ({e}): make them valid first"
                ))
            };
            if !a.overlaps(b).map_err(failed)? {
                continue;
            }
            let shared = a.intersection(b).map_err(failed)?;
            let area = shared.area().map_err(NativeError::geos)?;
            problems.push(Problem {
                feature: i,
                related: Some(j),
                field: None,
                value: None,
                problem: "overlap",
                reason: format!("the polygons overlap (area={area:.6})"),
                geom: Some(to_wkb(&shared)?),
            });
        }
    }
    Ok(problems)
}
