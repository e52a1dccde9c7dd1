//! `network_remove_pseudo_nodes`: LineStrings whose ends meet two at a point (and whose
//! `fields` agree) chained into one line, which keeps the attributes and direction of its
//! first line (lowest bounding-box x, then y, then WKB, then attributes).

use std::collections::HashMap;

use arrow::array::ArrayRef;
use arrow::compute::SortOptions;
use arrow::row::{RowConverter, Rows, SortField};

use super::{KeptRows, LineNetwork, Lines, Vertex};
use crate::NativeError;
use crate::geos_base::to_wkb;
use crate::layer::Layer;

/// A line end: the row and whether it is the line's last vertex.
type End = (usize, bool);

/// A point's exact coordinates as a hash key (-0 and 0 alike).
fn node(v: &Vertex) -> (u64, u64) {
    ((v[0] + 0.0).to_bits(), (v[1] + 0.0).to_bits())
}

/// The named columns of the batch (every attribute when `names` is `None`) in a row format
/// that compares and orders as the values do (`None` without such columns: all rows alike).
fn rows_of(
    network: &LineNetwork,
    layer: &Layer,
    names: Option<&[String]>,
) -> Result<Option<Rows>, NativeError> {
    let geom = layer.geometry_index()?;
    let schema = network.batch.schema();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for (n, field) in schema.fields().iter().enumerate() {
        let wanted = match names {
            Some(names) => names.iter().any(|f| f == field.name()),
            None => n != geom,
        };
        if wanted {
            columns.push(network.batch.column(n).clone());
        }
    }
    if columns.is_empty() {
        return Ok(None);
    }
    let fields = columns
        .iter()
        .map(|c| {
            let nulls_last = SortOptions {
                descending: false,
                nulls_first: false,
            };
            SortField::new_with_options(c.data_type().clone(), nulls_last)
        })
        .collect();
    let converter = RowConverter::new(fields).map_err(NativeError::arrow)?;
    converter
        .convert_columns(&columns)
        .map(Some)
        .map_err(NativeError::arrow)
}

/// The single part of a LineString row (`None` for other rows).
fn single(network: &LineNetwork, row: usize) -> Option<&Vec<Vertex>> {
    match &network.lines[row] {
        Some(Lines {
            parts,
            multi: false,
            ..
        }) => parts.first(),
        _ => None,
    }
}

/// The rows kept (in input order) and their geometries: merged chains in their first line's
/// row, the other lines of a chain dropped.
pub fn remove_pseudo_nodes(
    network: &LineNetwork,
    layer: &Layer,
    fields: &[String],
) -> Result<KeptRows, NativeError> {
    let count = network.lines.len();
    let mut at: HashMap<(u64, u64), Vec<End>> = HashMap::new();
    for (row, lines) in network.lines.iter().enumerate() {
        for part in lines.iter().flat_map(|l| l.parts.iter()) {
            if let (Some(first), Some(last)) = (part.first(), part.last()) {
                at.entry(node(first)).or_default().push((row, false));
                at.entry(node(last)).or_default().push((row, true));
            }
        }
    }
    let keys = rows_of(network, layer, Some(fields))?;
    // joins[row][last end] = the end it is chained to.
    let mut joins: Vec<[Option<End>; 2]> = vec![[None, None]; count];
    for ends in at.values() {
        let &[a, b] = ends.as_slice() else { continue };
        if a.0 == b.0 || single(network, a.0).is_none() || single(network, b.0).is_none() {
            continue;
        }
        if keys.as_ref().is_some_and(|k| k.row(a.0) != k.row(b.0)) {
            continue;
        }
        joins[a.0][usize::from(a.1)] = Some(b);
        joins[b.0][usize::from(b.1)] = Some(a);
    }
    let attributes = rows_of(network, layer, None)?;
    let bounds = |row: usize| {
        let mut low = [f64::INFINITY; 2];
        for v in single(network, row).into_iter().flatten() {
            low = [low[0].min(v[0]), low[1].min(v[1])];
        }
        low
    };
    let mut order: Vec<usize> = (0..count)
        .filter(|&r| single(network, r).is_some())
        .collect();
    let lows: Vec<[f64; 2]> = (0..count).map(bounds).collect();
    order.sort_by(|&a, &b| {
        lows[a][0]
            .total_cmp(&lows[b][0])
            .then(lows[a][1].total_cmp(&lows[b][1]))
            .then_with(|| network.wkb[a].cmp(&network.wkb[b]))
            .then_with(|| match &attributes {
                Some(rows) => rows.row(a).cmp(&rows.row(b)),
                None => std::cmp::Ordering::Equal,
            })
            .then(a.cmp(&b))
    });
    let mut merged_into: Vec<Option<usize>> = vec![None; count];
    let mut merged: HashMap<usize, Vec<Vertex>> = HashMap::new();
    for &first in &order {
        if merged_into[first].is_some() || joins[first] == [None, None] {
            continue;
        }
        merged_into[first] = Some(first);
        let mut chain: Vec<Vertex> = single(network, first).cloned().unwrap_or_default();
        // Forward from the last end, then backward from the first end.
        for forward in [true, false] {
            let mut leaving = joins[first][usize::from(forward)];
            while let Some((row, entered_at_last)) = leaving {
                if merged_into[row].is_some() {
                    break;
                }
                merged_into[row] = Some(first);
                let mut part = single(network, row).cloned().unwrap_or_default();
                // Forward, the next line must start where the chain ends.
                if entered_at_last == forward {
                    part.reverse();
                }
                if forward {
                    chain.extend(part.into_iter().skip(1));
                } else {
                    part.pop();
                    part.extend(chain);
                    chain = part;
                }
                leaving = joins[row][usize::from(!entered_at_last)];
            }
        }
        merged.insert(first, chain);
    }
    let mut keep = Vec::new();
    let mut geometries = Vec::new();
    for (row, into) in merged_into.iter().enumerate() {
        match *into {
            Some(first) if first != row => continue,
            Some(_) => {
                let z = network.lines[row].as_ref().is_some_and(|l| l.z);
                let parts = vec![merged.remove(&row).unwrap_or_default()];
                let lines = Lines {
                    parts,
                    multi: false,
                    z,
                };
                geometries.push(Some(to_wkb(&lines.to_geos()?)?));
            }
            None => geometries.push(network.wkb[row].clone()),
        }
        keep.push(row);
    }
    Ok((keep, geometries))
}
