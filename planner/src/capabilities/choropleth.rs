//! `choropleth`: classify a numeric field and give each class a colour of a named scheme.

use schemars::JsonSchema;
use serde::Deserialize;

use super::classify::{classify_op, default_classes, default_method, default_output};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{ClassColors, ClassMethod, Operator};

/// Classify the numeric field `field` as `classify` does (same methods, same breaks as
/// mapclassify) and colour each class from the scheme `palette`: `<output>`,
/// `<output>_lower`, `<output>_upper` and `color` (`#rrggbb`; NULL for a NULL value). The
/// schemes are ColorBrewer's (sequential such as `YlOrRd`, `Blues`, `Greens`, `PuBuGn`;
/// diverging such as `RdBu`, `RdYlGn`, `Spectral`; qualitative such as `Set2`) and matplotlib's
/// `viridis`, `magma`, `inferno` and `plasma`. A ColorBrewer scheme gives its own set for the
/// number of classes the breaks make (3 to 9 for most); other counts are interpolated from its
/// largest set. `reverse` runs the scheme from its dark end.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Choropleth {
    /// The numeric field to classify.
    #[schemars(length(min = 1))]
    pub field: String,
    /// How the breaks are computed (default `jenks`).
    #[serde(default = "default_method")]
    pub method: ClassMethod,
    /// How many classes (default 5).
    #[serde(default = "default_classes")]
    #[schemars(range(min = 2, max = 32))]
    pub classes: u32,
    /// The colour scheme (default `YlOrRd`).
    #[serde(default = "default_palette")]
    pub palette: String,
    /// Run the scheme from its other end.
    #[serde(default)]
    pub reverse: bool,
    /// The name of the class field (default `class`).
    #[serde(default = "default_output")]
    #[schemars(length(min = 1))]
    pub output: String,
    /// The name of the colour field (default `color`).
    #[serde(default = "default_color_field")]
    #[schemars(length(min = 1))]
    pub color_field: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_palette() -> String {
    "YlOrRd".to_owned()
}

fn default_color_field() -> String {
    "color".to_owned()
}

impl CapabilityParams for Choropleth {
    const NAME: &'static str = "choropleth";
    const GROUP: Group = Group::Classification;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        Ok(vec![Operator::owned(classify_op(
            ctx,
            &self.field,
            self.method,
            self.classes,
            &self.output,
            Some(ClassColors {
                scheme: self.palette.clone(),
                reverse: self.reverse,
                field: self.color_field.clone(),
            }),
        )?)])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_unknown_scheme_is_named() {
        let params: Choropleth =
            serde_json::from_value(json!({"field": "pop", "palette": "Rainbow"})).unwrap();
        let ctx = LowerContext {
            step_id: "c",
            path: "p",
            input: None,
            others: &[],
            rasters: None,
        };
        let problems = params.lower(&ctx).unwrap_err();
        assert_eq!(problems[0].path, "p.palette");
        assert!(problems[0].message.contains("YlOrRd"), "{problems:?}");
    }
}
