//! EXPLAIN text: the plan as numbered, indented lines, from each root down to the scans.

use std::collections::BTreeMap;
use std::fmt::Write;

use petgraph::stable_graph::NodeIndex;

use super::graph::{Plan, PlanNode};
use super::operator::{
    AggItem, GeometryAgg, Operator, OverlayMode, RefColumns, TimeDirection, ValueExpr,
};

impl Plan {
    /// One line per node: `01)Map set=[...] step=buffer_1`, inputs indented by `--`. A node
    /// read by several consumers is printed once; later mentions say `(see NN)`.
    pub fn explain(&self) -> String {
        let mut out = String::new();
        let mut seen: BTreeMap<NodeIndex, usize> = BTreeMap::new();
        let mut counter = 0;
        for root in self.roots() {
            self.explain_node(root, 0, &mut counter, &mut seen, &mut out);
        }
        out
    }

    fn explain_node(
        &self,
        index: NodeIndex,
        depth: usize,
        counter: &mut usize,
        seen: &mut BTreeMap<NodeIndex, usize>,
        out: &mut String,
    ) {
        *counter += 1;
        let indent = "--".repeat(depth);
        if let Some(number) = seen.get(&index) {
            let _ = writeln!(out, "{counter:02}){indent}(see {number:02})");
            return;
        }
        seen.insert(index, *counter);
        if let Some(node) = self.node(index) {
            let marker = if self.result == Some(index) {
                " [result]"
            } else {
                ""
            };
            let _ = writeln!(out, "{counter:02}){indent}{}{marker}", describe(node));
        }
        for input in self.inputs(index) {
            self.explain_node(input, depth + 1, counter, seen, out);
        }
    }
}

fn list<T>(items: &[T], show: impl Fn(&T) -> String) -> String {
    format!(
        "[{}]",
        items.iter().map(show).collect::<Vec<_>>().join(", ")
    )
}

fn agg(item: &AggItem) -> String {
    format!(
        "{}({}) AS {}",
        item.func.sql(),
        item.column.as_deref().unwrap_or("*"),
        item.output
    )
}

fn value(value: &ValueExpr) -> String {
    match value {
        ValueExpr::Sql(expr) => expr.to_sql(),
        ValueExpr::Cast { column, to } => format!("CAST({column} AS {})", to.sql()),
        ValueExpr::Geo(geo) => geo.explain(),
    }
}

fn describe_op(op: &Operator) -> String {
    let name = op.name();
    match op {
        Operator::Scan { source, columns } => match columns {
            Some(columns) => format!(
                "{name} source={source} columns={}",
                list(columns, Clone::clone)
            ),
            None => format!("{name} source={source}"),
        },
        Operator::Filter { predicate } => format!("{name} {predicate}"),
        Operator::Network(n) => format!("{name} {}", n.describe()),
        Operator::Map(map) => {
            let mut parts = vec![name.to_owned()];
            if !map.drop.is_empty() {
                parts.push(format!("drop={}", list(&map.drop, Clone::clone)));
            }
            if !map.rename.is_empty() {
                parts.push(format!(
                    "rename={}",
                    list(&map.rename, |(a, b)| format!("{a}→{b}"))
                ));
            }
            if !map.set.is_empty() {
                parts.push(format!(
                    "set={}",
                    list(&map.set, |(n, v, _)| format!("{n}={}", value(v)))
                ));
            }
            parts.join(" ")
        }
        Operator::Aggregate(a) => format!(
            "{name} group_by={} aggregates={}{}",
            list(&a.group_by, Clone::clone),
            list(&a.aggregates, agg),
            match a.geometry {
                Some(GeometryAgg::Union) => " union_geometry",
                Some(GeometryAgg::Collect) => " collect_geometry",
                None => "",
            }
        ),
        Operator::SpatialJoin(j) => format!(
            "{name} predicate={:?} how={:?} columns={}{}",
            j.predicate,
            j.how,
            list(&j.columns, Clone::clone),
            j.distance
                .map(|d| format!(" distance={d}"))
                .unwrap_or_default()
        )
        .to_lowercase()
        .replacen("spatialjoin", name, 1),
        Operator::SpatialAggregate(a) => format!(
            "{name} predicate={} aggregates={}",
            format!("{:?}", a.predicate).to_lowercase(),
            list(&a.aggregates, agg)
        ),
        Operator::SpatialFilter(f) => format!(
            "{name} predicate={}{}",
            format!("{:?}", f.predicate).to_lowercase(),
            if f.negate { " negate" } else { "" }
        ),
        Operator::Nearest(n) => format!(
            "{name} columns={} distance_field={}{}{}",
            match &n.columns {
                RefColumns::All => "all".to_owned(),
                RefColumns::Only(columns) if columns.is_empty() => "none".to_owned(),
                RefColumns::Only(columns) => list(columns, Clone::clone),
            },
            n.distance_field,
            n.max_distance
                .map(|d| format!(" max_distance={d}"))
                .unwrap_or_default(),
            n.locate
                .as_ref()
                .map(|l| {
                    let fields: Vec<&str> = l.fields().into_iter().map(|(f, _)| f).collect();
                    format!(
                        " locate_along_lines={}{}",
                        fields.join(","),
                        if l.centroids { " centroids" } else { "" }
                    )
                })
                .unwrap_or_default()
        ),
        Operator::Overlay(o) => {
            let mode = match o.mode {
                OverlayMode::Clip => "clip",
                OverlayMode::Erase => "erase",
                OverlayMode::Intersection => "intersection",
                OverlayMode::SymmetricDifference => "symmetric_difference",
                OverlayMode::Union => "union",
                OverlayMode::DifferenceWithUnion => "difference_with_union",
            };
            format!("{name} mode={mode}")
        }
        Operator::Concat => name.to_owned(),
        Operator::Project { columns } => format!("{name} columns={}", list(columns, Clone::clone)),
        Operator::Join(j) => {
            let mut text = format!(
                "{name} how={} on={}",
                format!("{:?}", j.how).to_lowercase(),
                list(&j.on, |k| format!(
                    "{}={}{}",
                    k.left,
                    k.right,
                    if k.as_text { " as text" } else { "" }
                ))
            );
            if !j.columns.is_empty() {
                let _ = write!(
                    text,
                    " columns={}",
                    list(&j.columns, |(from, to)| if from == to {
                        from.clone()
                    } else {
                        format!("{from}→{to}")
                    })
                );
            }
            if let Some(t) = &j.time {
                let tolerance = t
                    .tolerance_seconds
                    .map_or_else(|| "any".to_owned(), |s| format!("{s}s"));
                let _ = write!(
                    text,
                    " time={}~{} tolerance={tolerance}{}{}",
                    t.left,
                    t.right,
                    if t.nearest { " nearest" } else { "" },
                    match t.direction {
                        TimeDirection::Both => String::new(),
                        direction => format!(" {}", direction.as_str()),
                    }
                );
            }
            let _ = write!(text, " suffix={}", j.suffix);
            text
        }
        Operator::Reshape(r) => format!("{name} {}", r.describe()),
        Operator::Validate(v) => format!("{name} {}", v.describe()),
        Operator::Sort { keys, limit } => format!(
            "{name} keys={}{}",
            list(keys, |k| format!(
                "{}{}",
                k.column,
                if k.descending { " DESC" } else { "" }
            )),
            limit.map(|n| format!(" limit={n}")).unwrap_or_default()
        ),
        Operator::Distinct { columns, keep } => format!(
            "{name} columns={} keep={keep:?}",
            list(columns, Clone::clone)
        ),
        Operator::Sample { rows, seed } => format!("{name} rows={rows} seed={seed}"),
        Operator::Owned(o) => format!("{name} {}", o.explain()),
        Operator::Export(e) => {
            format!(
                "{name} destination={} format={}",
                e.destination,
                e.format.as_str()
            )
        }
    }
}

fn describe(node: &PlanNode) -> String {
    let mut text = describe_op(&node.op);
    if !node.step.is_empty() {
        let _ = write!(text, " step={}", node.step);
    }
    if let Some(engine) = node.engine {
        let _ = write!(text, " engine={}", engine.as_str());
    }
    if let Some(why) = &node.engine_reason {
        let _ = write!(text, " why=\"{why}\"");
    }
    if let Some(stage) = node.stage {
        let _ = write!(text, " stage={stage}");
    }
    if !node.triggers.is_empty() {
        let _ = write!(text, " triggers={}", list(&node.triggers, Clone::clone));
    }
    text
}
