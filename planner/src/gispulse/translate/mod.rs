//! Translating one GISPulse step into native steps: each capability's translator reads the
//! GISPulse parameters ([`Args`]) and emits one or more native steps ([`Emitted`]) that give
//! GISPulse's answer — a translation onto native options, never a second implementation.

mod args;
mod attributes;
mod geometry;
mod overlay;

pub use args::Args;

use serde_json::{Map, Value};

use super::document::Form;

/// What a translator knows besides the step's parameters.
pub struct Scope<'a> {
    pub form: Form,
    /// The native source or step a GISPulse reference-layer name stands for.
    pub reference: &'a dyn Fn(&str) -> String,
}

impl Scope<'_> {
    /// GISPulse's measuring CRS when a step gives none: EPSG:3857 in rules files; in pipelines
    /// `auto` (GISPulse v2 chooses by the data: native `work_crs: "auto"`).
    pub fn default_crs_meters(&self) -> &'static str {
        match self.form {
            Form::RulesV1 => "EPSG:3857",
            Form::PipelineV2 => "auto",
        }
    }
}

/// The native steps one GISPulse step becomes.
pub struct Emitted {
    /// The GISPulse step's id; side steps are named `{id}__{k}`.
    pub id: String,
    /// `(capability, params, input)`: `input` `None` continues the step's main chain.
    pub steps: Vec<(String, Map<String, Value>, Option<String>)>,
}

impl Emitted {
    pub fn new(id: &str) -> Self {
        Self {
            id: id.to_owned(),
            steps: Vec::new(),
        }
    }

    /// A step of the main chain (it reads the previous one).
    pub fn main(&mut self, capability: &str, params: Map<String, Value>) {
        self.steps.push((capability.to_owned(), params, None));
    }

    /// A step reading `input` outside the main chain; answers its id.
    pub fn side(&mut self, capability: &str, params: Map<String, Value>, input: &str) -> String {
        let id = format!("{}__{}", self.id, self.steps.len());
        self.steps
            .push((capability.to_owned(), params, Some(input.to_owned())));
        id
    }
}

/// A capability's translator: reads `args`, emits into `out`.
pub type Translator = fn(&mut Args<'_>, &Scope<'_>, &mut Emitted);

/// The translator of GISPulse capability `name`, when geomill has one.
pub fn translator(name: &str) -> Option<Translator> {
    attributes::translator(name)
        .or_else(|| geometry::translator(name))
        .or_else(|| overlay::translator(name))
}

/// GISPulse type names (`add_field`'s `dtype`, `cast_field`'s `casts`) as native field types.
pub fn field_type(dtype: &str) -> Option<&'static str> {
    Some(match dtype.to_ascii_lowercase().as_str() {
        "int" | "integer" | "int32" | "int64" | "bigint" => "integer",
        "float" | "float32" | "float64" | "double" | "real" => "double",
        "str" | "string" | "text" | "varchar" => "text",
        "bool" | "boolean" => "boolean",
        "datetime" | "timestamp" | "date" => "timestamp",
        _ => return None,
    })
}

/// Native parameters from `(key, value)` pairs.
pub fn params<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}
