//! The style model: what geomill keeps of a layer's style (the JSON of `PUT /styles`).

use serde::{Deserialize, Serialize};

/// A layer's style: how each feature is drawn, and what it is labelled with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Style {
    pub renderer: Renderer,
    /// The field categories and ranges are read from (categorized and graduated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The symbol of a single-symbol style; the default symbol of the others.
    #[serde(default)]
    pub symbol: SymbolStyle,
    /// A categorized style's classes, each a value of `field`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<Category>,
    /// A graduated style's classes, each a range of `field`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranges: Vec<Range>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<Label>,
}

/// How features are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Renderer {
    /// Every feature with `symbol`.
    Single,
    /// A symbol per value of `field`.
    Categorized,
    /// A symbol per range of `field`.
    Graduated,
}

/// What a symbol draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SymbolKind {
    /// Polygons: a fill and an outline.
    #[default]
    Fill,
    /// Lines.
    Line,
    /// Points: a circle marker.
    Marker,
}

/// A symbol: colours as `#rrggbb`, widths and sizes in millimetres (as QGIS measures them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SymbolStyle {
    #[serde(default)]
    pub kind: SymbolKind,
    /// The fill (fill, marker) or line colour.
    #[serde(default = "default_color")]
    pub color: String,
    /// The outline colour (fill, marker).
    #[serde(default = "default_stroke")]
    pub stroke_color: String,
    /// The outline or line width, in mm.
    #[serde(default = "default_width")]
    pub stroke_width: f64,
    /// 0 (transparent) to 1.
    #[serde(default = "default_opacity")]
    pub opacity: f64,
    /// A marker's diameter, in mm.
    #[serde(default = "default_size")]
    pub size: f64,
}

fn default_color() -> String {
    "#e8a33d".into()
}

fn default_stroke() -> String {
    "#6b4a12".into()
}

fn default_width() -> f64 {
    0.26
}

fn default_opacity() -> f64 {
    1.0
}

fn default_size() -> f64 {
    2.0
}

impl Default for SymbolStyle {
    fn default() -> Self {
        Self {
            kind: SymbolKind::Fill,
            color: default_color(),
            stroke_color: default_stroke(),
            stroke_width: default_width(),
            opacity: default_opacity(),
            size: default_size(),
        }
    }
}

/// A class of a categorized style.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Category {
    /// The value of `field`, as text (QGIS compares it with the field's value).
    pub value: String,
    #[serde(default)]
    pub label: String,
    pub symbol: SymbolStyle,
}

/// A class of a graduated style: `lower < value ≤ upper` (the lowest range includes its lower
/// bound).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Range {
    pub lower: f64,
    pub upper: f64,
    #[serde(default)]
    pub label: String,
    pub symbol: SymbolStyle,
}

/// Labels drawn from a field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Label {
    pub field: String,
    /// In points.
    #[serde(default = "default_label_size")]
    pub size: f64,
    #[serde(default = "default_label_color")]
    pub color: String,
}

fn default_label_size() -> f64 {
    10.0
}

fn default_label_color() -> String {
    "#323232".into()
}

/// `#rrggbb` (or `#rgb`) as its three channels.
pub fn parse_hex(color: &str) -> Option<[u8; 3]> {
    let digits = color.strip_prefix('#')?;
    let digits: String = match digits.len() {
        3 => digits.chars().flat_map(|c| [c, c]).collect(),
        6 => digits.to_owned(),
        _ => return None,
    };
    let value = u32::from_str_radix(&digits, 16).ok()?;
    let [_, r, g, b] = value.to_be_bytes();
    Some([r, g, b])
}

impl Style {
    /// Every problem of the style, with the path of the offending field.
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut problems = Vec::new();
        let symbol = |problems: &mut Vec<(String, String)>, path: String, s: &SymbolStyle| {
            for (name, color) in [("color", &s.color), ("stroke_color", &s.stroke_color)] {
                if parse_hex(color).is_none() {
                    problems.push((
                        format!("{path}.{name}"),
                        format!("{color:?} is not #rrggbb"),
                    ));
                }
            }
            if !(0.0..=1.0).contains(&s.opacity) {
                problems.push((format!("{path}.opacity"), "must be between 0 and 1".into()));
            }
            for (name, value) in [("stroke_width", s.stroke_width), ("size", s.size)] {
                if !(value.is_finite() && value >= 0.0) {
                    problems.push((format!("{path}.{name}"), "must be a number ≥ 0".into()));
                }
            }
        };
        symbol(&mut problems, "symbol".into(), &self.symbol);
        for (i, category) in self.categories.iter().enumerate() {
            symbol(
                &mut problems,
                format!("categories[{i}].symbol"),
                &category.symbol,
            );
        }
        for (i, range) in self.ranges.iter().enumerate() {
            symbol(&mut problems, format!("ranges[{i}].symbol"), &range.symbol);
            if !(range.lower.is_finite() && range.upper.is_finite() && range.lower <= range.upper) {
                problems.push((format!("ranges[{i}]"), "needs finite lower ≤ upper".into()));
            }
        }
        let needs_field = self.renderer != Renderer::Single;
        if needs_field && self.field.as_deref().is_none_or(str::is_empty) {
            problems.push((
                "field".into(),
                "a categorized or graduated style needs a field".into(),
            ));
        }
        match self.renderer {
            Renderer::Categorized if self.categories.is_empty() => {
                problems.push((
                    "categories".into(),
                    "a categorized style needs categories".into(),
                ));
            }
            Renderer::Graduated if self.ranges.is_empty() => {
                problems.push(("ranges".into(), "a graduated style needs ranges".into()));
            }
            _ => {}
        }
        if let Some(label) = &self.label
            && parse_hex(&label.color).is_none()
        {
            problems.push((
                "label.color".into(),
                format!("{:?} is not #rrggbb", label.color),
            ));
        }
        problems
    }

    /// A single-symbol style for a layer of `geometry_type` (as GDAL names it).
    pub fn default_for(geometry_type: Option<&str>) -> Self {
        let kind = match geometry_type.unwrap_or_default().to_ascii_lowercase() {
            t if t.contains("point") => SymbolKind::Marker,
            t if t.contains("line") => SymbolKind::Line,
            _ => SymbolKind::Fill,
        };
        Self {
            renderer: Renderer::Single,
            field: None,
            symbol: SymbolStyle {
                kind,
                ..SymbolStyle::default()
            },
            categories: Vec::new(),
            ranges: Vec::new(),
            label: None,
        }
    }
}
