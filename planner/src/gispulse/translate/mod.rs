//! Translating one GISPulse step into native steps: each capability's translator reads the
//! GISPulse parameters ([`Args`]) and emits one or more native steps ([`Emitted`]) that give
//! GISPulse's answer — a translation onto native options, never a second implementation.

mod args;
mod attributes;
mod bivariate;
mod checks;
mod classes;
mod cleaning;
mod clusters;
mod diff;
mod geometry;
mod graphs;
mod grids;
mod locate;
mod network;
mod overlay;
mod pointclouds;
mod polygons;
mod rasters;
mod reshape;
mod scales;
mod temporal;
mod toolkit;
mod validation;
mod weights;

pub use args::Args;

use serde_json::{Map, Value, json};

use super::document::Form;
use super::pandas;

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
    /// Where the main chain starts when not at the step's input (a capability that ignores
    /// its input and answers over a reference layer).
    pub chain_from: Option<String>,
}

impl Emitted {
    pub fn new(id: &str) -> Self {
        Self {
            id: id.to_owned(),
            steps: Vec::new(),
            chain_from: None,
        }
    }

    /// Starts the main chain at `source` (a reference layer, or a side step) instead of the
    /// step's input, which the capability ignores.
    pub fn main_from(&mut self, source: &str) {
        self.chain_from = Some(source.to_owned());
    }

    /// A step of the main chain (it reads the previous one).
    pub fn main(&mut self, capability: &str, params: Map<String, Value>) {
        self.steps.push((capability.to_owned(), params, None));
    }

    /// A filter keeping the rows where every one of `fields` has a value (nothing when none).
    pub fn keep_not_null(&mut self, fields: &[String]) {
        if fields.is_empty() {
            return;
        }
        let condition = fields
            .iter()
            .map(|name| format!("{} IS NOT NULL", crate::sql::quote::ident(name)))
            .collect::<Vec<_>>()
            .join(" AND ");
        self.main("filter", params([("where", json!(condition))]));
    }

    /// A sort by `fields`, each ascending (nothing when none).
    pub fn sort_ascending(&mut self, fields: &[String]) {
        if fields.is_empty() {
            return;
        }
        let keys: Vec<Value> = fields.iter().map(|name| json!({"field": name})).collect();
        self.main("sort", params([("by", json!(keys))]));
    }

    /// GISPulse's columns over the main chain: each computed by its expression in
    /// `expressions` (an object), then only `fields` kept (and the geometry).
    pub fn columns_as(&mut self, expressions: Value, fields: &[&str]) {
        self.main("calculate", params([("expressions", expressions)]));
        self.main("select_columns", params([("fields", json!(fields))]));
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
        .or_else(|| toolkit::translator(name))
        .or_else(|| temporal::translator(name))
        .or_else(|| classes::translator(name))
        .or_else(|| diff::translator(name))
        .or_else(|| locate::translator(name))
        .or_else(|| reshape::translator(name))
        .or_else(|| scales::translator(name))
        .or_else(|| clusters::translator(name))
        .or_else(|| checks::translator(name))
        .or_else(|| weights::translator(name))
        .or_else(|| graphs::translator(name))
        .or_else(|| polygons::translator(name))
        .or_else(|| bivariate::translator(name))
        .or_else(|| network::translator(name))
        .or_else(|| cleaning::translator(name))
        .or_else(|| grids::translator(name))
        .or_else(|| validation::translator(name))
        .or_else(|| rasters::translator(name))
        .or_else(|| pointclouds::translator(name))
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

/// A pandas expression compiled to the SQL text native steps take, or a problem at `key`.
pub fn compiled(args: &mut Args<'_>, key: &str, text: &str) -> Option<String> {
    match pandas::parse(text).and_then(|e| pandas::compile(&e)) {
        Ok(expr) => Some(expr.to_sql()),
        Err(message) => {
            args.problem(key, message);
            None
        }
    }
}

/// The source a step's `ref_layer` stands for, behind a filter step when the capability takes
/// GISPulse's `ref_filter` and it is given; `None` (with a problem) when the step names none.
pub fn reference_layer(
    args: &mut Args<'_>,
    scope: &Scope<'_>,
    out: &mut Emitted,
    takes_filter: bool,
) -> Option<String> {
    let Some(name) = args.string("ref_layer") else {
        args.problem(
            "ref_layer",
            "this capability needs a reference layer (ref_layer)",
        );
        return None;
    };
    let mut source = (scope.reference)(&name);
    if let Some(text) = args.string("ref_filter").filter(|_| takes_filter)
        && let Some(condition) = compiled(args, "ref_filter", &text)
    {
        source = out.side("filter", params([("where", json!(condition))]), &source);
    }
    Some(source)
}

/// GISPulse's `palette` when it is a list of colours (`None` when none is given); a named
/// palette is a problem, `why_not` saying why it is not read yet.
pub fn palette_list(args: &mut Args<'_>, why_not: &str) -> Option<Vec<String>> {
    match args.value("palette") {
        None | Some(Value::Null) => None,
        Some(Value::Array(colors)) if colors.iter().all(Value::is_string) => Some(
            colors
                .iter()
                .filter_map(|c| c.as_str().map(str::to_owned))
                .collect(),
        ),
        Some(_) => {
            args.problem(
                "palette",
                format!("only a list of colours is supported yet ({why_not})"),
            );
            None
        }
    }
}

/// A `CASE` giving the class `first` + k of the SQL `class` the k-th of `colors` (NULL past
/// them).
pub fn class_colors(class: &str, first: usize, colors: &[String]) -> String {
    let arms: String = colors
        .iter()
        .enumerate()
        .map(|(k, c)| {
            format!(
                " WHEN {class} = {} THEN {}",
                first + k,
                crate::sql::quote::string(c)
            )
        })
        .collect();
    format!("CASE{arms} END")
}

/// `translator` run on the rules-file step parameters `given` (a reference layer named as
/// itself): the problems it names and the steps it emits.
#[cfg(test)]
pub(crate) fn translated_by(translator: Translator, given: Value) -> (Vec<String>, Emitted) {
    let given = given.as_object().cloned().unwrap_or_default();
    let mut args = Args::new(&given, "[0].config");
    let reference = |name: &str| name.to_owned();
    let scope = Scope {
        form: super::document::Form::RulesV1,
        reference: &reference,
    };
    let mut out = Emitted::new("step");
    translator(&mut args, &scope, &mut out);
    let problems = args.problems.iter().map(|p| p.message.clone()).collect();
    (problems, out)
}
