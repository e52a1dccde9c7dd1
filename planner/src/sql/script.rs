//! A plan as an SQL script: one statement per stage (nodes fused into one stage become CTEs of
//! one query), each creating the table named after its last step; exports last.

use std::collections::BTreeMap;
use std::fmt::Write;

use petgraph::stable_graph::NodeIndex;
use serde::Serialize;

use super::dialect::Dialect;
use super::quote::{ident, string};
use super::select::{Input, select};
use crate::error::PlanError;
use crate::plan::native::native_kernel;
use crate::plan::operator::{ExportFormat, ExportOp, Operator, ValueExpr};
use crate::plan::{EngineKind, Plan};

/// One statement of a script.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Statement {
    /// The steps whose work the statement does.
    pub steps: Vec<String>,
    /// The table it creates (or, for an export, reads).
    pub relation: String,
    /// The statement as shown (`parts` joined with `;`).
    pub sql: String,
    /// What runs: one SQL statement each, executed one by one in order (a PostGIS stage drops
    /// its table before creating it). The planner splits its own statements here; nothing
    /// splits SQL text after it.
    #[serde(skip)]
    pub parts: Vec<String>,
    /// Set when the stage runs natively: its plan nodes and the kernels that compute them. The
    /// SQL is then what runs instead when a kernel declines the data (e.g. polygons where
    /// points are expected). Serialised as the kernels' line.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "NativeStatement::serialize_kernels"
    )]
    pub native: Option<NativeStatement>,
}

/// The native part of a statement: what the executor hands the native backend.
#[derive(Debug, Clone, PartialEq)]
pub struct NativeStatement {
    /// The stage's plan nodes, in execution order (every one assigned to the native backend).
    pub nodes: Vec<NodeIndex>,
    /// Their kernels in a line, joined with "; then " (what `sql-preview` prints).
    pub kernels: String,
}

impl NativeStatement {
    fn serialize_kernels<S: serde::Serializer>(
        native: &Option<Self>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match native {
            Some(native) => serializer.serialize_str(&native.kernels),
            None => serializer.serialize_none(),
        }
    }
}

/// The statements of a plan, in execution order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Script {
    pub dialect: Dialect,
    pub statements: Vec<Statement>,
    /// The table holding the pipeline's result.
    pub result: Option<String>,
}

impl Script {
    /// The script as text: every statement behind a comment naming its steps.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (i, statement) in self.statements.iter().enumerate() {
            let _ = writeln!(out, "-- {}: {}", i + 1, statement.steps.join(", "));
            if let Some(native) = &statement.native {
                let _ = writeln!(out, "-- runs natively: {}", native.kernels);
                let _ = writeln!(
                    out,
                    "-- (the SQL below runs instead if a kernel declines the data)"
                );
            }
            let _ = writeln!(out, "{};\n", statement.sql);
        }
        out
    }
}

/// Emits `plan` in `dialect`.
pub fn emit(plan: &Plan, dialect: Dialect) -> Result<Script, PlanError> {
    let order = plan.topological().ok_or_else(|| PlanError::Emit {
        dialect: dialect.as_str(),
        step: String::new(),
        reason: "the plan has a cycle".into(),
    })?;
    // Stages grouped in topological order; a node without a stage is a stage of its own.
    let mut stages: Vec<(Option<usize>, Vec<NodeIndex>)> = Vec::new();
    let mut stage_slot: BTreeMap<usize, usize> = BTreeMap::new();
    for &index in &order {
        let Some(node) = plan.node(index) else {
            continue;
        };
        if matches!(node.op, Operator::Scan { columns: None, .. }) {
            continue;
        }
        match node.stage.and_then(|s| stage_slot.get(&s).copied()) {
            Some(slot) => stages[slot].1.push(index),
            None => {
                if let Some(stage) = node.stage {
                    stage_slot.insert(stage, stages.len());
                }
                stages.push((node.stage, vec![index]));
            }
        }
    }
    // A stage runs once all it reads exists: in the order of its last node (a step's chain
    // can start before the stage of its second input, a mask say, is made).
    let position: BTreeMap<NodeIndex, usize> =
        order.iter().enumerate().map(|(at, n)| (*n, at)).collect();
    stages.sort_by_key(|(_, nodes)| nodes.last().and_then(|n| position.get(n)).copied());
    let mut statements = Vec::new();
    for (_, nodes) in &stages {
        statements.push(stage_statement(plan, nodes, dialect)?);
    }
    Ok(Script {
        dialect,
        statements,
        result: plan
            .result
            .and_then(|r| plan.node(r))
            .map(|n| n.relation.clone()),
    })
}

/// What a consumer puts after FROM to read `index`: a source table, or a step's relation.
fn from_item(plan: &Plan, index: NodeIndex) -> String {
    match plan.node(index) {
        Some(node) => match &node.op {
            Operator::Scan {
                source,
                columns: None,
            } => ident(source),
            _ => ident(&node.relation),
        },
        None => String::new(),
    }
}

/// Whether `op` computes its rows' geometries (making them valid, buffering, ...). PostgreSQL
/// inlines a CTE read once into its reader, copying the CTE's expression into every place the
/// reader names the column: a geodesic buffer names its input geometry fifteen times, so a
/// make-valid step below it ran `ST_IsValid` fifteen times per feature (9.6 s where 3.2 s is
/// the work, on 3,000 regions). Such CTEs are `MATERIALIZED` on PostGIS: computed once per row,
/// and nothing is lost, as a computed geometry has no index to use anyway. DuckDB computes a
/// CTE's expressions once.
fn computes_geometry(op: &Operator) -> bool {
    match op {
        Operator::Map(map) => map
            .set
            .iter()
            .any(|(_, value, _)| matches!(value, ValueExpr::Geo(_))),
        _ => false,
    }
}

fn stage_statement(
    plan: &Plan,
    nodes: &[NodeIndex],
    dialect: Dialect,
) -> Result<Statement, PlanError> {
    let mut queries = Vec::new();
    let mut steps: Vec<String> = Vec::new();
    let native = native_statement(plan, nodes);
    for &index in nodes {
        let Some(node) = plan.node(index) else {
            continue;
        };
        let emit_error = |reason: String| PlanError::Emit {
            dialect: dialect.as_str(),
            step: if node.step.is_empty() {
                node.relation.clone()
            } else {
                node.step.clone()
            },
            reason,
        };
        let inputs = plan.inputs(index);
        let froms: Vec<String> = inputs.iter().map(|i| from_item(plan, *i)).collect();
        let ins: Vec<Input<'_>> = inputs
            .iter()
            .zip(&froms)
            .map(|(i, from)| Input {
                from,
                schema: plan.node(*i).and_then(|n| n.schema.as_ref()),
            })
            .collect();
        if let Operator::Export(export) = &node.op {
            let sql = export_sql(export, ins.first().map_or("", |i| i.from), dialect);
            return Ok(Statement {
                steps: vec![node.step.clone()],
                relation: node.relation.clone(),
                parts: vec![sql.clone()],
                sql,
                native: None,
            });
        }
        let query = if let Operator::Scan { .. } = node.op {
            select(
                &node.op,
                &[Input {
                    from: "",
                    schema: None,
                }],
                None,
                dialect,
            )
        } else {
            select(&node.op, &ins, node.schema.as_ref(), dialect)
        }
        .map_err(emit_error)?;
        if !node.step.is_empty() && !steps.contains(&node.step) {
            steps.push(node.step.clone());
        }
        queries.push((node.relation.clone(), query, computes_geometry(&node.op)));
    }
    let Some((relation, last, _)) = queries.pop() else {
        return Err(PlanError::Emit {
            dialect: dialect.as_str(),
            step: String::new(),
            reason: "an empty stage".into(),
        });
    };
    let body = if queries.is_empty() {
        last
    } else {
        let ctes: Vec<String> = queries
            .iter()
            .map(|(name, q, computed)| match dialect {
                Dialect::Postgis if *computed => format!("{} AS MATERIALIZED ({q})", ident(name)),
                _ => format!("{} AS ({q})", ident(name)),
            })
            .collect();
        // A last query with CTEs of its own joins them after the stage's (a second WITH
        // cannot follow the first).
        let ctes = ctes.join(",\n");
        if let Some(rest) = last.strip_prefix("WITH RECURSIVE ") {
            format!("WITH RECURSIVE {ctes},\n{rest}")
        } else if let Some(rest) = last.strip_prefix("WITH ") {
            format!("WITH {ctes},\n{rest}")
        } else {
            format!("WITH {ctes}\n{last}")
        }
    };
    if steps.is_empty() {
        steps.push(relation.clone());
    }
    let parts = dialect.create_table(&relation, &body);
    Ok(Statement {
        steps,
        sql: parts.join(";\n"),
        parts,
        relation,
        native,
    })
}

/// The native part of a stage whose every node runs natively.
fn native_statement(plan: &Plan, nodes: &[NodeIndex]) -> Option<NativeStatement> {
    let kernels: Vec<String> = nodes
        .iter()
        .map(|&index| {
            let node = plan.node(index)?;
            (node.engine == Some(EngineKind::Native))
                .then(|| native_kernel(&node.op))
                .flatten()
        })
        .collect::<Option<_>>()?;
    (!kernels.is_empty()).then(|| NativeStatement {
        nodes: nodes.to_vec(),
        kernels: kernels.join("; then "),
    })
}

fn export_sql(export: &ExportOp, from: &str, dialect: Dialect) -> String {
    match dialect {
        // A step's result is not looked at before it is written: no FlatGeobuf index.
        Dialect::Duckdb => duckdb_copy(
            from,
            &export.destination,
            export.format,
            None,
            FgbIndex::Skip,
        ),
        // PostgreSQL cannot write these formats: geomill's exporter reads the table and writes
        // the file. The statement says so and does nothing; a line break in the destination
        // would end the comment, so control characters are shown as spaces.
        Dialect::Postgis => format!(
            "-- geomill writes {from} to {} as {}\nSELECT 1",
            string(&export.destination).replace(char::is_control, " "),
            export.format.as_str()
        ),
    }
}

/// Whether a FlatGeobuf file gets its packed R-tree. GDAL cannot index a NULL geometry, so a
/// layer that holds one (or an empty one, written as NULL) must be written without the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FgbIndex {
    /// Write the index (every geometry is present and non-empty).
    Build,
    /// No index: the layer may hold NULL or empty geometries.
    Skip,
}

/// DuckDB's `COPY (SELECT * FROM from) TO destination` in `format` (through GDAL but for
/// Parquet, which DuckDB writes itself as GeoParquet), optionally naming the layer.
/// FlatGeobuf has no empty geometries: they are written as NULL (GDAL's writer fails on them).
pub fn duckdb_copy(
    from: &str,
    destination: &str,
    format: ExportFormat,
    layer: Option<&str>,
    index: FgbIndex,
) -> String {
    let mut options = match format.gdal_driver() {
        Some(driver) => format!("FORMAT GDAL, DRIVER {}", string(driver)),
        None => "FORMAT parquet".to_owned(),
    };
    match format {
        // GDAL's CSV writer needs to be told how to write the geometry.
        ExportFormat::Csv => options.push_str(", LAYER_CREATION_OPTIONS 'GEOMETRY=AS_WKT'"),
        ExportFormat::Fgb if index == FgbIndex::Skip => {
            options.push_str(", LAYER_CREATION_OPTIONS 'SPATIAL_INDEX=NO'");
        }
        _ => {}
    }
    if let (Some(layer), Some(_)) = (layer, format.gdal_driver()) {
        options.push_str(&format!(", LAYER_NAME {}", string(layer)));
    }
    let select = match format {
        ExportFormat::Fgb => format!(
            "SELECT * REPLACE (CASE WHEN ST_IsEmpty({g}) THEN NULL ELSE {g} END AS {g}) FROM {from}",
            g = ident(crate::schema::GEOM)
        ),
        _ => format!("SELECT * FROM {from}"),
    };
    format!("COPY ({select}) TO {} ({options})", string(destination))
}
