//! A style as the QML QGIS 3 writes: `renderer-v2` (single, categorized or graduated symbols,
//! each a simple fill, line or marker symbol layer with `Option` maps) and simple labeling.

use std::fmt::Write;

use super::model::{Renderer, Style, SymbolKind, SymbolStyle, parse_hex};

/// XML text with the five special characters escaped (attribute values included).
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// `#rrggbb` and an opacity as QGIS writes a colour: `r,g,b,a`.
fn qgis_color(color: &str, opacity: f64) -> String {
    let [r, g, b] = parse_hex(color).unwrap_or([0, 0, 0]);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let alpha = (opacity.clamp(0.0, 1.0) * 255.0).round() as u8;
    format!("{r},{g},{b},{alpha}")
}

fn option(out: &mut String, name: &str, value: &str) {
    let _ = writeln!(
        out,
        r#"            <Option name="{}" type="QString" value="{}"/>"#,
        escape(name),
        escape(value)
    );
}

/// One `<symbol>` named `name`.
fn symbol(out: &mut String, name: &str, s: &SymbolStyle) {
    let (kind, class) = match s.kind {
        SymbolKind::Fill => ("fill", "SimpleFill"),
        SymbolKind::Line => ("line", "SimpleLine"),
        SymbolKind::Marker => ("marker", "SimpleMarker"),
    };
    let _ = writeln!(
        out,
        r#"      <symbol type="{kind}" name="{}" alpha="{}" clip_to_extent="1" force_rhr="0">"#,
        escape(name),
        s.opacity
    );
    let _ = writeln!(
        out,
        r#"        <layer class="{class}" enabled="1" locked="0" pass="0">"#
    );
    out.push_str("          <Option type=\"Map\">\n");
    let color = qgis_color(&s.color, 1.0);
    let stroke = qgis_color(&s.stroke_color, 1.0);
    let width = s.stroke_width.to_string();
    match s.kind {
        SymbolKind::Fill => {
            option(out, "color", &color);
            option(out, "outline_color", &stroke);
            option(out, "outline_style", "solid");
            option(out, "outline_width", &width);
            option(out, "outline_width_unit", "MM");
            option(out, "style", "solid");
        }
        SymbolKind::Line => {
            option(out, "line_color", &color);
            option(out, "line_style", "solid");
            option(out, "line_width", &width);
            option(out, "line_width_unit", "MM");
        }
        SymbolKind::Marker => {
            option(out, "color", &color);
            option(out, "name", "circle");
            option(out, "outline_color", &stroke);
            option(out, "outline_width", &width);
            option(out, "outline_width_unit", "MM");
            option(out, "size", &s.size.to_string());
            option(out, "size_unit", "MM");
        }
    }
    out.push_str("          </Option>\n        </layer>\n      </symbol>\n");
}

/// The style as a QML document.
pub fn to_qml(style: &Style) -> String {
    let mut out = String::from(
        "<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>\n\
         <qgis version=\"3.34.0\" styleCategories=\"Symbology|Labeling\">\n",
    );
    let field = escape(style.field.as_deref().unwrap_or_default());
    let mut symbols = String::new();
    match style.renderer {
        Renderer::Single => {
            out.push_str(r#"  <renderer-v2 type="singleSymbol" symbollevels="0" enableorderby="0" forceraster="0">"#);
            out.push('\n');
            symbol(&mut symbols, "0", &style.symbol);
        }
        Renderer::Categorized => {
            let _ = writeln!(
                out,
                r#"  <renderer-v2 type="categorizedSymbol" attr="{field}" symbollevels="0" enableorderby="0" forceraster="0">"#
            );
            out.push_str("    <categories>\n");
            for (i, c) in style.categories.iter().enumerate() {
                let _ = writeln!(
                    out,
                    r#"      <category render="true" symbol="{i}" value="{}" label="{}" type="string"/>"#,
                    escape(&c.value),
                    escape(&c.label)
                );
                symbol(&mut symbols, &i.to_string(), &c.symbol);
            }
            out.push_str("    </categories>\n");
        }
        Renderer::Graduated => {
            let _ = writeln!(
                out,
                r#"  <renderer-v2 type="graduatedSymbol" attr="{field}" graduatedMethod="GraduatedColor" symbollevels="0" enableorderby="0" forceraster="0">"#
            );
            out.push_str("    <ranges>\n");
            for (i, r) in style.ranges.iter().enumerate() {
                let _ = writeln!(
                    out,
                    r#"      <range render="true" symbol="{i}" lower="{}" upper="{}" label="{}"/>"#,
                    r.lower,
                    r.upper,
                    escape(&r.label)
                );
                symbol(&mut symbols, &i.to_string(), &r.symbol);
            }
            out.push_str("    </ranges>\n");
        }
    }
    out.push_str("    <symbols>\n");
    out.push_str(&symbols);
    out.push_str("    </symbols>\n");
    if style.renderer != Renderer::Single {
        out.push_str("    <source-symbol>\n");
        symbol(&mut out, "0", &style.symbol);
        out.push_str("    </source-symbol>\n");
    }
    out.push_str("  </renderer-v2>\n");
    if let Some(label) = &style.label {
        let _ = writeln!(
            out,
            "  <labeling type=\"simple\">\n    <settings calloutType=\"simple\">\n      \
             <text-style fieldName=\"{}\" fontSize=\"{}\" fontSizeUnit=\"Point\" textColor=\"{}\" \
             isExpression=\"0\"/>\n    </settings>\n  </labeling>",
            escape(&label.field),
            label.size,
            qgis_color(&label.color, 1.0)
        );
    }
    out.push_str("</qgis>\n");
    out
}
