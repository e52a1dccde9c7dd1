//! Shapes made valid in the OGC model (GEOS's, and every SQL engine's `ST_IsValid`): the sweep
//! may give a ring that pinches at a vertex, or holes that touch their shell at two points and
//! cut its interior in two. Where rings meet at a vertex, the boundary is traced again face by
//! face (at a shared vertex, the next edge is the first clockwise from the way back, so the
//! region on the left stays one region), each traced cycle is cut into simple loops at its
//! repeated vertices, the counter-clockwise loops are shells and the clockwise ones holes, and
//! each hole goes to the shell that holds it.

use std::collections::HashMap;

use i_overlay::i_float::int::point::IntPoint;
use rayon::prelude::*;

use super::strips::{Contour, Shape, winding};

/// The shapes with every ring simple (a shape whose rings are simple is kept as it is).
pub(super) fn split_touching_rings(shapes: Vec<Shape>) -> Vec<Shape> {
    shapes
        .into_par_iter()
        .flat_map_iter(|shape| {
            let shared = shared_vertices(&shape);
            if shared.is_empty() {
                vec![shape]
            } else {
                rebuilt(&shape, &shared)
            }
        })
        .collect()
}

/// The vertices on two rings of the shape, or twice on one, sorted.
fn shared_vertices(shape: &Shape) -> Vec<IntPoint> {
    let mut all: Vec<(i32, i32)> = shape.iter().flatten().map(|p| (p.x, p.y)).collect();
    all.sort_unstable();
    let mut shared: Vec<IntPoint> = all
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| IntPoint::new(w[0].0, w[0].1))
        .collect();
    shared.dedup();
    shared
}

fn is_shared(shared: &[IntPoint], p: &IntPoint) -> bool {
    shared
        .binary_search_by(|q| (q.x, q.y).cmp(&(p.x, p.y)))
        .is_ok()
}

/// The boundary of a shape as cycles, each face's boundary traced on its own.
fn traced(shape: &Shape, shared: &[IntPoint]) -> Vec<Contour> {
    let (mut from, mut to, mut succ) = (Vec::new(), Vec::new(), Vec::new());
    for contour in shape {
        let (base, n) = (from.len(), contour.len());
        for i in 0..n {
            from.push(contour[i]);
            to.push(contour[(i + 1) % n]);
            succ.push(base + (i + 1) % n);
        }
    }
    let mut outgoing: HashMap<IntPoint, Vec<usize>> = HashMap::new();
    for (e, p) in from.iter().enumerate() {
        if is_shared(shared, p) {
            outgoing.entry(*p).or_default().push(e);
        }
    }
    let mut used = vec![false; from.len()];
    let mut cycles = Vec::new();
    for start in 0..from.len() {
        let mut e = start;
        let mut cycle = Vec::new();
        while !used[e] {
            used[e] = true;
            cycle.push(from[e]);
            let v = to[e];
            e = match is_shared(shared, &v).then(|| outgoing.get(&v)).flatten() {
                Some(candidates) => first_clockwise(from[e], v, candidates, &to),
                None => succ[e],
            };
        }
        if !cycle.is_empty() {
            cycles.push(cycle);
        }
    }
    cycles
}

/// Of the edges leaving `v` (to the points `to[e]`), the first clockwise from the way back to
/// `u` (exact integer turns).
fn first_clockwise(u: IntPoint, v: IntPoint, candidates: &[usize], to: &[IntPoint]) -> usize {
    let back = (
        i128::from(u.x) - i128::from(v.x),
        i128::from(u.y) - i128::from(v.y),
    );
    let dir = |e: usize| {
        (
            i128::from(to[e].x) - i128::from(v.x),
            i128::from(to[e].y) - i128::from(v.y),
        )
    };
    let cross = |a: (i128, i128), b: (i128, i128)| a.0 * b.1 - a.1 * b.0;
    let dot = |a: (i128, i128), b: (i128, i128)| a.0 * b.0 + a.1 * b.1;
    // 0: within half a turn clockwise, 1: half a turn, 2: more, 3: straight back (a full turn).
    let group = |d: (i128, i128)| match cross(back, d).signum() {
        -1 => 0,
        1 => 2,
        _ if dot(back, d) < 0 => 1,
        _ => 3,
    };
    let mut best = candidates[0];
    for &e in &candidates[1..] {
        let (a, b) = (dir(e), dir(best));
        let (ga, gb) = (group(a), group(b));
        if ga < gb || (ga == gb && (ga == 0 || ga == 2) && cross(b, a) < 0) {
            best = e;
        }
    }
    best
}

/// Twice the signed area (positive counter-clockwise).
fn signed_area(contour: &Contour) -> i128 {
    let n = contour.len();
    (0..n)
        .map(|i| {
            let (a, b) = (contour[i], contour[(i + 1) % n]);
            i128::from(a.x) * i128::from(b.y) - i128::from(b.x) * i128::from(a.y)
        })
        .sum()
}

/// A closed contour cut into simple loops at its repeated vertices.
fn loops(contour: &Contour) -> Vec<Contour> {
    let mut out = Vec::new();
    let mut stack: Contour = Vec::with_capacity(contour.len());
    let mut at: HashMap<IntPoint, usize> = HashMap::new();
    for &p in contour {
        if let Some(&i) = at.get(&p) {
            let tail = stack.split_off(i + 1);
            let mut closed = vec![p];
            closed.extend(tail);
            for q in &closed[1..] {
                at.remove(q);
            }
            out.push(closed);
        } else {
            at.insert(p, stack.len());
            stack.push(p);
        }
    }
    out.push(stack);
    out.retain(|c| c.len() >= 3 && signed_area(c) != 0);
    out
}

/// One shape's rings as simple shells with their holes.
fn rebuilt(shape: &Shape, shared: &[IntPoint]) -> Vec<Shape> {
    let mut shells: Vec<Contour> = Vec::new();
    let mut holes: Vec<Contour> = Vec::new();
    for cycle in traced(shape, shared) {
        for ring in loops(&cycle) {
            if signed_area(&ring) > 0 {
                shells.push(ring);
            } else {
                holes.push(ring);
            }
        }
    }
    if shells.is_empty() {
        return Vec::new();
    }
    // The largest shell takes every hole no smaller shell holds (the smaller ones are tested
    // first, within their extents: the largest, with most vertices, is never searched).
    shells.sort_by_key(|s| std::cmp::Reverse(signed_area(s)));
    let extents: Vec<[i32; 4]> = shells.iter().map(extent).collect();
    let mut out: Vec<Shape> = shells.into_iter().map(|s| vec![s]).collect();
    for hole in holes {
        let e = extent(&hole);
        let owner = (1..out.len())
            .find(|&i| {
                let s = extents[i];
                s[0] <= e[0]
                    && s[1] <= e[1]
                    && s[2] >= e[2]
                    && s[3] >= e[3]
                    && holds(&out[i][0], &hole, shared)
            })
            .unwrap_or(0);
        out[owner].push(hole);
    }
    out
}

fn extent(contour: &Contour) -> [i32; 4] {
    contour.iter().fold(
        [i32::MAX, i32::MAX, i32::MIN, i32::MIN],
        |[a, b, c, d], p| [a.min(p.x), b.min(p.y), c.max(p.x), d.max(p.y)],
    )
}

/// Whether `shell` holds `hole`: the first vertex of the hole on no other ring is inside it
/// (rings meet only at the shared vertices).
fn holds(shell: &Contour, hole: &Contour, shared: &[IntPoint]) -> bool {
    hole.iter()
        .find(|p| !is_shared(shared, p))
        .is_some_and(|p| winding(shell, *p) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contour(points: &[(i32, i32)]) -> Contour {
        points.iter().map(|&(x, y)| IntPoint::new(x, y)).collect()
    }

    #[test]
    fn a_pinched_shell_becomes_a_shell_and_a_hole_touching_it() {
        // A square whose boundary runs into a notch and back through its corner (2, 2): the
        // inner loop is clockwise, an inverted hole.
        let pinched = contour(&[
            (0, 0),
            (4, 0),
            (4, 4),
            (2, 2),
            (3, 1),
            (1, 1),
            (2, 2),
            (0, 4),
        ]);
        let shapes = split_touching_rings(vec![vec![pinched]]);
        assert_eq!(shapes.len(), 1, "{shapes:?}");
        assert_eq!(shapes[0].len(), 2, "{shapes:?}");
        assert!(shared_vertices(&vec![shapes[0][0].clone()]).is_empty());
        assert!(signed_area(&shapes[0][0]) > 0 && signed_area(&shapes[0][1]) < 0);
    }

    #[test]
    fn a_figure_of_eight_becomes_two_shells_and_a_hole_goes_to_its_own() {
        let eight = contour(&[
            (0, 0),
            (4, 0),
            (4, 4),
            (8, 4),
            (8, 8),
            (4, 8),
            (4, 4),
            (0, 4),
        ]);
        let hole = contour(&[(5, 5), (5, 7), (7, 7), (7, 5)]);
        let shapes = split_touching_rings(vec![vec![eight, hole.clone()]]);
        assert_eq!(shapes.len(), 2, "{shapes:?}");
        let with_hole: Vec<&Shape> = shapes.iter().filter(|s| s.len() == 2).collect();
        assert_eq!(with_hole.len(), 1);
        assert_eq!(with_hole[0][1], hole);
        assert!(with_hole[0][0].iter().any(|p| p.x == 8));
    }

    #[test]
    fn a_hole_touching_its_shell_twice_cuts_off_a_polygon() {
        // A 10 x 4 rectangle and a hole touching its bottom at (3, 0) and top at (3, 4)... as a
        // diamond from (3, 0) to (3, 4): left of it a region of its own.
        let shell = contour(&[(0, 0), (3, 0), (10, 0), (10, 4), (3, 4), (0, 4)]);
        let hole = contour(&[(3, 0), (2, 2), (3, 4), (4, 2)]);
        let shapes = split_touching_rings(vec![vec![shell, hole]]);
        assert_eq!(shapes.len(), 2, "{shapes:?}");
        assert!(shapes.iter().all(|s| s.len() == 1), "{shapes:?}");
        let mut areas: Vec<i128> = shapes.iter().map(|s| signed_area(&s[0])).collect();
        areas.sort_unstable();
        // Twice the areas: left 3 * 4 - 2 = 10 (doubled 20), right 7 * 4 - 2 = 26 (52).
        assert_eq!(areas, vec![20, 52]);
    }
}
