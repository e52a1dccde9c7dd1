//! A style as MapLibre GL paint properties for the map page: the colour of each feature as an
//! expression over its vector tile properties (a `match` on a categorized style's field, a
//! `case` over a graduated style's ranges), widths and sizes from millimetres to pixels.

use serde_json::{Value, json};

use super::model::{Renderer, Style};

/// Pixels per millimetre at 96 dpi (what QGIS's screen rendering assumes).
const PIXELS_PER_MM: f64 = 96.0 / 25.4;

/// The colour expression of each feature.
fn color(style: &Style) -> Value {
    let default = json!(style.symbol.color);
    let field = style.field.clone().unwrap_or_default();
    match style.renderer {
        Renderer::Single => default,
        Renderer::Categorized if !style.categories.is_empty() => {
            let mut expression = vec![json!("match"), json!(["to-string", ["get", field]])];
            for category in &style.categories {
                expression.push(json!(category.value));
                expression.push(json!(category.symbol.color));
            }
            expression.push(default);
            Value::Array(expression)
        }
        Renderer::Graduated if !style.ranges.is_empty() => {
            let mut expression = vec![
                json!("case"),
                json!(["==", ["get", field], null]),
                default.clone(),
            ];
            for range in &style.ranges {
                expression.push(json!(["<=", ["to-number", ["get", field]], range.upper]));
                expression.push(json!(range.symbol.color));
            }
            expression.push(default);
            Value::Array(expression)
        }
        _ => default,
    }
}

/// The paint of the page's three layers: `fill` (polygons), `line` (outlines and lines) and
/// `circle` (points).
pub fn paint(style: &Style) -> Value {
    let symbol = &style.symbol;
    let color = color(style);
    let width = (symbol.stroke_width * PIXELS_PER_MM).max(0.5);
    json!({
        "fill": {"fill-color": color, "fill-opacity": symbol.opacity},
        "line": {
            "line-color": ["case",
                ["in", ["geometry-type"], ["literal", ["Polygon", "MultiPolygon"]]],
                symbol.stroke_color, color],
            "line-width": width
        },
        "circle": {
            "circle-color": color,
            "circle-opacity": symbol.opacity,
            "circle-radius": symbol.size * PIXELS_PER_MM / 2.0,
            "circle-stroke-color": symbol.stroke_color,
            "circle-stroke-width": width
        }
    })
}
