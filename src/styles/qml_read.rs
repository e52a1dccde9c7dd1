//! Reading the QML QGIS writes into the style model: what the model holds is kept (the
//! renderer, the field, each class's value or range and label, each symbol's first simple
//! layer, simple labels), and everything else is listed as dropped.

use roxmltree::{Document, Node, ParsingOptions};

use super::model::{Category, Label, Range, Renderer, Style, SymbolKind, SymbolStyle};

/// A style read from QML, and what the model could not keep.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub style: Style,
    pub dropped: Vec<String>,
}

fn element<'a, 'input>(node: Node<'a, 'input>, name: &str) -> Option<Node<'a, 'input>> {
    node.children().find(|n| n.has_tag_name(name))
}

/// A symbol layer's properties, from QGIS 3's `Option` map or the older `prop` elements.
fn properties(layer: Node<'_, '_>) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for node in layer.descendants() {
        if node.has_tag_name("prop") {
            if let (Some(k), Some(v)) = (node.attribute("k"), node.attribute("v")) {
                found.push((k.to_owned(), v.to_owned()));
            }
        } else if node.has_tag_name("Option")
            && let (Some(name), Some(value)) = (node.attribute("name"), node.attribute("value"))
        {
            found.push((name.to_owned(), value.to_owned()));
        }
    }
    found
}

/// A QGIS colour (`r,g,b,a`, possibly followed by more) as `#rrggbb` and its opacity.
fn color(text: &str) -> Option<(String, f64)> {
    let parts: Vec<u8> = text
        .split(',')
        .take(4)
        .map(|p| p.trim().parse::<u8>().ok())
        .collect::<Option<_>>()?;
    let [r, g, b] = [*parts.first()?, *parts.get(1)?, *parts.get(2)?];
    let alpha = parts.get(3).copied().unwrap_or(255);
    Some((format!("#{r:02x}{g:02x}{b:02x}"), f64::from(alpha) / 255.0))
}

/// A `<symbol>` element as the model's symbol.
fn symbol(node: Node<'_, '_>, name: &str, dropped: &mut Vec<String>) -> SymbolStyle {
    let mut s = SymbolStyle {
        kind: match node.attribute("type") {
            Some("line") => SymbolKind::Line,
            Some("marker") => SymbolKind::Marker,
            _ => SymbolKind::Fill,
        },
        opacity: node
            .attribute("alpha")
            .and_then(|a| a.parse().ok())
            .unwrap_or(1.0),
        ..SymbolStyle::default()
    };
    let layers: Vec<Node<'_, '_>> = node
        .children()
        .filter(|n| n.has_tag_name("layer"))
        .collect();
    for extra in layers.iter().skip(1) {
        dropped.push(format!(
            "symbol {name}: symbol layer {} (only the first is kept)",
            extra.attribute("class").unwrap_or("?")
        ));
    }
    let Some(layer) = layers.first() else {
        dropped.push(format!("symbol {name}: no symbol layer"));
        return s;
    };
    let class = layer.attribute("class").unwrap_or_default();
    if !matches!(class, "SimpleFill" | "SimpleLine" | "SimpleMarker") {
        dropped.push(format!(
            "symbol {name}: symbol layer class {class} (read as a simple one)"
        ));
    }
    for (key, value) in properties(*layer) {
        match key.as_str() {
            "color" | "line_color" => {
                if let Some((hex, _)) = color(&value) {
                    s.color = hex;
                }
            }
            "outline_color" => {
                if let Some((hex, _)) = color(&value) {
                    s.stroke_color = hex;
                }
            }
            "outline_width" | "line_width" => {
                if let Ok(width) = value.parse() {
                    s.stroke_width = width;
                }
            }
            "size" => {
                if let Ok(size) = value.parse() {
                    s.size = size;
                }
            }
            _ => {}
        }
    }
    s
}

/// Reads a QML document; `Err` names what makes it unreadable.
pub fn from_qml(text: &str) -> Result<Imported, String> {
    // QGIS writes a DOCTYPE; roxmltree never fetches what one names, and the node limit bounds
    // what entity declarations can expand to.
    let options = ParsingOptions {
        allow_dtd: true,
        nodes_limit: 1_000_000,
        ..ParsingOptions::default()
    };
    let document =
        Document::parse_with_options(text, options).map_err(|e| format!("not XML: {e}"))?;
    let root = document.root_element();
    if !root.has_tag_name("qgis") {
        return Err(format!(
            "not a QGIS style: the root element is <{}>, not <qgis>",
            root.tag_name().name()
        ));
    }
    let renderer = element(root, "renderer-v2")
        .ok_or("the style has no <renderer-v2> (no symbology to import)")?;
    let mut dropped = Vec::new();
    let kind = match renderer.attribute("type") {
        Some("singleSymbol") => Renderer::Single,
        Some("categorizedSymbol") => Renderer::Categorized,
        Some("graduatedSymbol") => Renderer::Graduated,
        other => {
            return Err(format!(
                "renderer {} is not one geomill keeps (singleSymbol, categorizedSymbol, graduatedSymbol)",
                other.unwrap_or("(none)")
            ));
        }
    };
    let symbols: Vec<(String, Node<'_, '_>)> = element(renderer, "symbols")
        .map(|s| {
            s.children()
                .filter(|n| n.has_tag_name("symbol"))
                .map(|n| (n.attribute("name").unwrap_or_default().to_owned(), n))
                .collect()
        })
        .unwrap_or_default();
    let symbol_named = |name: &str, dropped: &mut Vec<String>| {
        symbols
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, node)| symbol(*node, name, dropped))
    };
    let default_symbol = match kind {
        Renderer::Single => symbol_named("0", &mut dropped),
        _ => element(renderer, "source-symbol")
            .and_then(|s| element(s, "symbol"))
            .map(|s| symbol(s, "source", &mut dropped)),
    }
    .unwrap_or_default();
    let mut categories = Vec::new();
    let mut ranges = Vec::new();
    if let Some(list) = element(renderer, "categories") {
        for c in list.children().filter(|n| n.has_tag_name("category")) {
            let name = c.attribute("symbol").unwrap_or_default();
            let symbol = symbol_named(name, &mut dropped).unwrap_or_else(|| default_symbol.clone());
            if c.attribute("render") == Some("false") {
                dropped.push(format!(
                    "category {:?}: hidden (render=false)",
                    c.attribute("value")
                ));
            }
            categories.push(Category {
                value: c.attribute("value").unwrap_or_default().to_owned(),
                label: c.attribute("label").unwrap_or_default().to_owned(),
                symbol,
            });
        }
    }
    if let Some(list) = element(renderer, "ranges") {
        for r in list.children().filter(|n| n.has_tag_name("range")) {
            let name = r.attribute("symbol").unwrap_or_default();
            let symbol = symbol_named(name, &mut dropped).unwrap_or_else(|| default_symbol.clone());
            let bound = |key: &str| r.attribute(key).and_then(|v| v.trim().parse::<f64>().ok());
            let (Some(lower), Some(upper)) = (bound("lower"), bound("upper")) else {
                dropped.push(format!("range {name}: bounds that are not numbers"));
                continue;
            };
            ranges.push(Range {
                lower,
                upper,
                label: r.attribute("label").unwrap_or_default().to_owned(),
                symbol,
            });
        }
    }
    for (tag, what) in [
        ("rotation", "data-defined rotation"),
        ("sizescale", "data-defined size"),
        ("effect", "draw effects"),
        ("orderby", "feature order"),
    ] {
        if renderer.descendants().any(|n| n.has_tag_name(tag)) {
            dropped.push(what.to_owned());
        }
    }
    let label = match element(root, "labeling") {
        Some(labeling) if labeling.attribute("type") == Some("simple") => {
            let text = labeling
                .descendants()
                .find(|n| n.has_tag_name("text-style"));
            text.and_then(|t| {
                let field = t.attribute("fieldName")?.to_owned();
                if t.attribute("isExpression") == Some("1") {
                    dropped.push(format!("label expression {field:?}"));
                    return None;
                }
                Some(Label {
                    field,
                    size: t
                        .attribute("fontSize")
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(10.0),
                    color: t
                        .attribute("textColor")
                        .and_then(color)
                        .map_or_else(|| "#323232".to_owned(), |(hex, _)| hex),
                })
            })
        }
        Some(labeling) => {
            dropped.push(format!(
                "labeling of type {} (only simple labels are kept)",
                labeling.attribute("type").unwrap_or("?")
            ));
            None
        }
        None => None,
    };
    for child in root.children().filter(Node::is_element) {
        let name = child.tag_name().name();
        if !matches!(name, "renderer-v2" | "labeling") {
            dropped.push(format!("<{name}>"));
        }
    }
    dropped.sort();
    dropped.dedup();
    Ok(Imported {
        style: Style {
            renderer: kind,
            field: renderer
                .attribute("attr")
                .map(str::to_owned)
                .filter(|a| !a.is_empty()),
            symbol: default_symbol,
            categories,
            ranges,
            label,
        },
        dropped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::styles::qml_write::to_qml;

    #[test]
    fn a_written_style_reads_back_the_same() {
        let red = SymbolStyle {
            color: "#e31a1c".into(),
            opacity: 0.8,
            ..SymbolStyle::default()
        };
        let style = Style {
            renderer: Renderer::Graduated,
            field: Some("pop & <est>".into()),
            symbol: SymbolStyle::default(),
            categories: Vec::new(),
            ranges: vec![Range {
                lower: 0.5,
                upper: 1e9,
                label: "\"all\"".into(),
                symbol: red,
            }],
            label: Some(Label {
                field: "name".into(),
                size: 9.0,
                color: "#000000".into(),
            }),
        };
        let imported = from_qml(&to_qml(&style)).unwrap();
        assert_eq!(imported.style, style);
        assert!(imported.dropped.is_empty(), "{:?}", imported.dropped);
    }
}
