//! GISPulse's `pivot` (pandas `pivot_table`) onto the native pivot whose columns are the values
//! found in the data: GISPulse's names (`{values}_{value}`), `first` by default, the fill, and
//! each group's first geometry.

use serde_json::json;

use super::{Args, Emitted, Scope, Translator, params};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "pivot" => pivot,
        _ => return None,
    })
}

const AGGREGATES: &[&str] = &[
    "first", "last", "mean", "sum", "min", "max", "count", "median",
];

fn pivot(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let index = args.names("index").filter(|names| !names.is_empty());
    let columns = args.string("columns").filter(|c| !c.is_empty());
    let values = args.names("values").filter(|names| !names.is_empty());
    let (Some(index), Some(columns), Some(values)) = (index, columns, values) else {
        args.problem("index", "pivot needs index, columns and values");
        return;
    };
    let [value] = values.as_slice() else {
        args.problem(
            "values",
            "several values fields are not supported yet (one is)",
        );
        return;
    };
    let aggregate = args.string("aggfunc").unwrap_or_else(|| "first".into());
    if !AGGREGATES.contains(&aggregate.as_str()) {
        args.problem(
            "aggfunc",
            format!("{aggregate:?}: expected one of {}", AGGREGATES.join(", ")),
        );
        return;
    }
    if let Some(strategy) = args.string("geom_strategy").filter(|s| s != "first") {
        args.problem(
            "geom_strategy",
            format!("{strategy:?} is not supported yet (first is)"),
        );
        return;
    }
    let mut native = params([
        ("index", json!(index)),
        ("columns", json!(columns)),
        ("values", json!(value)),
        ("aggregate", json!(aggregate)),
        ("prefix", json!(format!("{value}_"))),
        ("geometry", json!("first")),
    ]);
    if let Some(fill) = args.value("fill_value") {
        native.insert("fill_value".into(), fill.clone());
    }
    args.note("pivot: the columns are the values found in the data (the native pivot without column_values, run on the native backend); a later step cannot name them when the run is planned");
    out.main("pivot", native);
}
