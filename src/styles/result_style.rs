//! A run whose last step colours classes (`choropleth`, `classify_categorical` with a palette,
//! `bivariate_choropleth`) writes the matching style into its result GeoPackage, so QGIS opens
//! the result drawn: graduated ranges from the classes' bounds, or categories.

use std::path::Path;

use geomill_planner::plan::Plan;
use geomill_planner::plan::operator::{Operator, ScaleKind, ScaleOp};
use geomill_planner::plan::ops::classify::ClassifyOp;
use serde_json::Value;

use super::model::{Category, Range, Renderer, Style, SymbolStyle};
use super::qml_write::to_qml;
use crate::state::AppState;

/// The coloured classes a plan's last step makes.
struct Classes {
    renderer: Renderer,
    /// The field the style reads (the classified one, or the bivariate class).
    field: String,
    /// The step's class field (its bounds or label beside it).
    output: String,
    color_field: String,
    /// Graduated ranges read from the bounds; otherwise categories from `label` (or the
    /// class number itself).
    labelled: bool,
}

fn coloured_classes(plan: &Plan) -> Option<Classes> {
    match &plan.node(plan.result?)?.op {
        Operator::Owned(o) if let Some(c) = o.downcast::<ClassifyOp>() => Some(Classes {
            renderer: Renderer::Graduated,
            field: c.field.clone(),
            output: c.output.clone(),
            color_field: c.colors.as_ref()?.field.clone(),
            labelled: false,
        }),
        Operator::Owned(o) if let Some(s) = o.downcast::<ScaleOp>() => match &s.kind {
            ScaleKind::Categories { colors, .. } => Some(Classes {
                renderer: Renderer::Categorized,
                field: s.field.clone(),
                output: s.output.clone(),
                color_field: colors.as_ref()?.field.clone(),
                labelled: true,
            }),
            ScaleKind::Bivariate { color_field, .. } => Some(Classes {
                renderer: Renderer::Categorized,
                field: s.output.clone(),
                output: s.output.clone(),
                color_field: color_field.clone(),
                labelled: false,
            }),
            _ => None,
        },
        _ => None,
    }
}

/// The distinct classes of the result file, each as a JSON object.
async fn class_rows(state: &AppState, sql: String) -> Option<Vec<Value>> {
    let engine = state.embedded();
    let timeout = std::time::Duration::from_secs(30);
    let rows = tokio::task::spawn_blocking(move || engine.query_rows(&[], &sql, 10_000, timeout))
        .await
        .ok()?
        .ok()?;
    rows.rows
        .iter()
        .map(|row| serde_json::from_str(row).ok())
        .collect()
}

/// Writes the style of the result's classes into `result_file` (layer `result`), when its last
/// step coloured classes; a failure is logged, never the run's.
pub async fn style_result(state: &AppState, plan: &Plan, result_file: &Path) {
    let Some(classes) = coloured_classes(plan) else {
        return;
    };
    let quoted = |name: &str| format!("\"{}\"", name.replace('"', "\"\""));
    let output = &classes.output;
    let (class, color) = (quoted(output), quoted(&classes.color_field));
    let columns = match (classes.renderer, classes.labelled) {
        (Renderer::Graduated, _) => format!(
            "{class} AS class, {} AS lower, {} AS upper, {color} AS color",
            quoted(&format!("{output}_lower")),
            quoted(&format!("{output}_upper"))
        ),
        (_, true) => format!(
            "{class} AS class, {} AS value, {color} AS color",
            quoted(&format!("{output}_label"))
        ),
        (_, false) => {
            format!("{class} AS class, CAST({class} AS VARCHAR) AS value, {color} AS color")
        }
    };
    let file = geomill_backends::duckdb::file_source(&result_file.display().to_string());
    let sql =
        format!("SELECT DISTINCT {columns} FROM {file} WHERE {class} IS NOT NULL ORDER BY class");
    let Some(rows) = class_rows(state, sql).await else {
        tracing::warn!(file = %result_file.display(), "the result's classes could not be read for its style");
        return;
    };
    let symbol = |row: &Value| SymbolStyle {
        color: row["color"].as_str().unwrap_or("#e8a33d").to_owned(),
        ..SymbolStyle::default()
    };
    let mut style = Style::default_for(None);
    style.renderer = classes.renderer;
    style.field = Some(classes.field);
    for row in &rows {
        match classes.renderer {
            Renderer::Graduated => {
                let (Some(lower), Some(upper)) = (row["lower"].as_f64(), row["upper"].as_f64())
                else {
                    continue;
                };
                style.ranges.push(Range {
                    lower,
                    upper,
                    label: format!("{lower} – {upper}"),
                    symbol: symbol(row),
                });
            }
            _ => {
                let value = row["value"].as_str().unwrap_or_default().to_owned();
                style.categories.push(Category {
                    label: value.clone(),
                    value,
                    symbol: symbol(row),
                });
            }
        }
    }
    let store = state.store();
    let (path, qml, now) = (
        result_file.display().to_string(),
        to_qml(&style),
        crate::timestamp::now(),
    );
    let written = tokio::task::spawn_blocking(move || {
        store.write_gpkg_style(&path, "result", "geom", &qml, &now)
    })
    .await;
    if !matches!(written, Ok(Ok(()))) {
        tracing::warn!(file = %result_file.display(), "the result's style was not written");
    }
}
