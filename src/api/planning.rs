//! What the planning endpoints share: reading the engine, catalog and variables of a request,
//! and shaping previews and validation results.

use std::collections::BTreeMap;

use geomill_planner::compile::DialectSql;
use geomill_planner::optimizer::EngineMode;
use geomill_planner::schema::Catalog;
use geomill_planner::spec::Vars;
use geomill_planner::sql::Dialect;
use geomill_planner::{PlanError, Preview};
use serde_json::{Value, json};

use crate::error::{AppError, ErrorKind};
use crate::state::AppState;

/// How to plan a request.
#[derive(Debug, Clone)]
pub struct PreviewOptions {
    dialect: Dialect,
    mode: EngineMode,
    catalog: Catalog,
    vars: Vars,
}

impl PreviewOptions {
    /// `engine` is a dialect name (`duckdb`, `postgis`) or an engine name (`embedded`,
    /// `native`, `postgis`, `hybrid`); absent, the server's engine decides.
    pub fn parse(
        state: &AppState,
        engine: Option<&str>,
        catalog: Option<Value>,
        vars: Option<BTreeMap<String, String>>,
    ) -> Result<Self, AppError> {
        let name = engine.unwrap_or(state.config().engine.as_str());
        let mode = EngineMode::parse(name).ok_or_else(|| {
            AppError::bad_request(format!(
                "engine must be duckdb, embedded, native, postgis, hybrid or distributed, got {name:?}"
            ))
        })?;
        let dialect = mode.dialect();
        let catalog = match catalog {
            Some(value) => serde_json::from_value(value)
                .map_err(|e| AppError::unprocessable(format!("catalog: {e}")))?,
            None => Catalog::default(),
        };
        let vars = Vars {
            values: vars.unwrap_or_default(),
            strict: false,
        };
        Ok(Self {
            dialect,
            mode,
            catalog,
            vars,
        })
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The same options planning `document` with a generic schema for every source it reads
    /// (see [`geomill_planner::compile::generic_catalog`]).
    pub fn with_generic_catalog(mut self, document: &Value) -> Result<Self, AppError> {
        self.catalog = geomill_planner::compile::generic_catalog(document, &self.vars)?;
        Ok(self)
    }

    /// Plans `document` and emits both dialects.
    pub fn preview(&self, document: &Value) -> Result<Vec<Preview>, AppError> {
        Ok(geomill_planner::preview(
            document,
            &self.catalog,
            &self.vars,
            self.mode,
            &Dialect::ALL,
        )?)
    }

    /// The preview of a document holding one pipeline.
    pub fn preview_one(&self, document: &Value) -> Result<Preview, AppError> {
        self.preview(document)?
            .into_iter()
            .next()
            .ok_or_else(|| AppError::unprocessable("the document holds no pipeline"))
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn vars(&self) -> &Vars {
        &self.vars
    }
}

fn dialect_sql(preview: &Preview, dialect: Dialect) -> Result<&DialectSql, AppError> {
    preview
        .sql
        .iter()
        .find(|s| s.dialect == dialect)
        .ok_or_else(|| AppError::internal(&"a dialect is missing from the preview"))
}

/// The script of `dialect` as text, or 422 when the plan cannot be written in it.
pub fn sql_text(preview: &Preview, dialect: Dialect) -> Result<String, AppError> {
    let sql = dialect_sql(preview, dialect)?;
    match (&sql.script, &sql.error) {
        (Some(script), _) => Ok(script.to_text()),
        (None, error) => Err(AppError::new(
            ErrorKind::Invalid,
            "unsupported",
            error.clone().unwrap_or_default(),
        )),
    }
}

/// The statements of `dialect` (steps, table, SQL).
pub fn statements(preview: &Preview, dialect: Dialect) -> Result<Value, AppError> {
    let sql = dialect_sql(preview, dialect)?;
    Ok(json!(sql.script.as_ref().map(|s| &s.statements)))
}

/// A preview as JSON: plan texts and, per dialect, the statements and the script (or why the
/// dialect cannot express the plan).
pub fn preview_json(preview: &Preview) -> Value {
    let sql: serde_json::Map<String, Value> = preview
        .sql
        .iter()
        .map(|s| {
            let value = match (&s.script, &s.error) {
                (Some(script), _) => json!({ "statements": script.statements, "text": script.to_text(), "result": script.result }),
                (None, error) => json!({ "error": error }),
            };
            (s.dialect.as_str().to_owned(), value)
        })
        .collect();
    json!({ "plan": preview.plan, "optimized": preview.optimized, "sql": sql })
}

/// A single-step pipeline calling `capability` with `params`, reading `input` (default: the
/// source `input`).
pub fn single_step_document(capability: &str, params: Value, input: Option<&str>) -> Value {
    let mut step = json!({ "id": capability, "capability": capability, "params": params });
    if let Some(input) = input {
        step["input"] = json!(input);
    }
    json!({ "name": capability, "steps": [step] })
}

/// The outcome of a validation: problems are data here, not an error.
pub fn validation_json(result: &Result<usize, PlanError>) -> Result<Value, AppError> {
    match result {
        Ok(steps) => Ok(json!({ "valid": true, "steps": steps, "errors": [] })),
        Err(PlanError::Invalid(problems)) => Ok(json!({ "valid": false, "errors": problems })),
        Err(other) => Err(AppError::internal(other)),
    }
}
