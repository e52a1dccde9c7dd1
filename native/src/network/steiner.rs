//! An approximate Steiner tree by Mehlhorn's algorithm, step by step as networkx's
//! `steiner_tree` (its default method) runs it, over the network GISPulse builds.

use std::collections::{BTreeSet, HashMap};

use petgraph::unionfind::UnionFind;

use super::super::NativeError;
use super::super::layer::Layer;
use super::graph_reports::edge_rows;
use super::row_points;
use super::simple_graph::{EdgeLine, Graph, Pair};
use geomill_planner::plan::network::Steiner;

/// Kruskal's minimum spanning forest of `edges` (`(u, v, cost)`; equal costs in list order).
pub(super) fn spanning(nodes: usize, edges: &[(usize, usize, f64)]) -> Vec<(usize, usize, f64)> {
    let mut order: Vec<usize> = (0..edges.len()).collect();
    order.sort_by(|&a, &b| edges[a].2.total_cmp(&edges[b].2).then(a.cmp(&b)));
    let mut sets = UnionFind::<usize>::new(nodes);
    order
        .into_iter()
        .filter(|&e| sets.union(edges[e].0, edges[e].1))
        .map(|e| edges[e])
        .collect()
}

/// The nodes of the cheapest path from `from` to `to` (`None` when there is none).
fn path(graph: &Graph, from: usize, to: usize) -> Option<Vec<usize>> {
    let reached = graph.search(&[from], f64::INFINITY);
    let mut nodes = vec![to];
    let mut at = to;
    while at != from {
        at = reached.get(&at)?.2;
        nodes.push(at);
    }
    nodes.reverse();
    Some(nodes)
}

/// The tree's edges `(u, v)` (lower first) linking `terminals`.
fn tree(graph: &Graph, terminals: &[usize]) -> Result<BTreeSet<(usize, usize)>, NativeError> {
    let n = graph.nodes.len();
    let from_first = graph.search(&terminals[..1], f64::INFINITY);
    if terminals.iter().any(|t| !from_first.contains_key(t)) {
        return Err(NativeError::Input(
            "steiner_tree: the terminals are not all linked through the network".into(),
        ));
    }
    let nearest = graph.search(terminals, f64::INFINITY);
    // The cheapest link between each two terminals' regions.
    let mut links: HashMap<(usize, usize), f64> = HashMap::new();
    let mut link_order: Vec<(usize, usize)> = Vec::new();
    let mut pairs: Vec<(&Pair, &EdgeLine)> = graph.edges.iter().collect();
    pairs.sort_by_key(|(pair, _)| **pair);
    for (&(u, v), (cost, _)) in pairs {
        let (Some(&(du, su, _)), Some(&(dv, sv, _))) = (nearest.get(&u), nearest.get(&v)) else {
            continue;
        };
        let key = (su.min(sv), su.max(sv));
        let through = du + cost + dv;
        match links.get_mut(&key) {
            Some(best) => *best = best.min(through),
            None => {
                links.insert(key, through);
                link_order.push(key);
            }
        }
    }
    let linked: Vec<(usize, usize, f64)> =
        link_order.iter().map(|k| (k.0, k.1, links[k])).collect();
    // The shortest paths the spanning links stand for, then a spanning tree of their edges.
    let mut path_edges: Vec<(usize, usize, f64)> = Vec::new();
    let mut seen = BTreeSet::new();
    for (s, t, _) in spanning(n, &linked) {
        let nodes = path(graph, s, t).ok_or_else(|| {
            NativeError::Input("steiner_tree: the terminals are not all linked".into())
        })?;
        for w in nodes.windows(2) {
            let key = (w[0].min(w[1]), w[0].max(w[1]));
            if seen.insert(key) {
                path_edges.push((key.0, key.1, graph.edges[&key].0));
            }
        }
    }
    let mut kept: BTreeSet<(usize, usize)> = spanning(n, &path_edges)
        .into_iter()
        .map(|(u, v, _)| (u, v))
        .collect();
    // Leaves that are not terminals pruned until none is left.
    let is_terminal: BTreeSet<usize> = terminals.iter().copied().collect();
    loop {
        let mut degree: HashMap<usize, usize> = HashMap::new();
        for &(u, v) in &kept {
            *degree.entry(u).or_default() += 1;
            *degree.entry(v).or_default() += 1;
        }
        let before = kept.len();
        let stays = |n: usize| degree[&n] != 1 || is_terminal.contains(&n);
        kept.retain(|&(u, v)| stays(u) && stays(v));
        if kept.len() == before {
            return Ok(kept);
        }
    }
}

/// The tree's edges as rows: `u`, `v`, `weight` and the edge's line part.
pub fn steiner(lines: &Layer, terminals: &Layer, spec: &Steiner) -> Result<Layer, NativeError> {
    let graph = Graph::build(lines, spec.weight.as_deref())?;
    let mut nodes: Vec<usize> = Vec::new();
    for node in graph.place(&row_points(terminals)?).into_iter().flatten() {
        if !nodes.contains(&node) {
            nodes.push(node);
        }
    }
    let edges = if nodes.len() < 2 {
        BTreeSet::new()
    } else {
        tree(&graph, &nodes)?
    };
    let edges: Vec<Pair> = edges.into_iter().collect();
    edge_rows(lines, &graph, &edges)
}
