//! GISPulse's point-cloud capabilities onto the native ones (`pointcloud_filter_classification`:
//! its parameters are the native ones).

use serde_json::Map;

use super::{Args, Emitted, Scope, Translator};

pub fn translator(name: &str) -> Option<Translator> {
    Some(match name {
        "pointcloud_filter_classification" => filter_classification,
        _ => return None,
    })
}

fn filter_classification(args: &mut Args<'_>, _: &Scope<'_>, out: &mut Emitted) {
    let mut native = Map::new();
    for key in ["keep", "drop", "col"] {
        if let Some(value) = args.value(key) {
            // GISPulse's `null` is its default: not given.
            if !value.is_null() {
                native.insert(key.to_owned(), value.clone());
            }
        }
    }
    out.main("pointcloud_filter_classification", native);
}
