//! Relational steps of the native backend on DataFusion: the node's inputs registered as
//! in-memory tables of Arrow batches (shared, not copied), and the same SELECT the SQL engines
//! run (the planner's DuckDB form) planned and executed by DataFusion. Which steps come here,
//! and which expressions DataFusion computes exactly as DuckDB does, is the planner's
//! `plan/native.rs`; anything DataFusion cannot plan is declined, so the step runs as SQL.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BinaryArray, StringArray};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use datafusion::datasource::MemTable;
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{ColumnarValue, Volatility, create_udf};
use datafusion::prelude::SessionContext;
use geomill_planner::plan::operator::Operator;
use geomill_planner::schema::Schema;
use geomill_planner::sql::Dialect;
use geomill_planner::sql::quote::ident;
use geomill_planner::sql::select::{Input, select};

use super::{Layer, NativeError};

/// A DataFusion failure: the step is declined and runs as SQL.
fn declined(e: DataFusionError) -> NativeError {
    NativeError::Unsupported(format!("DataFusion: {e}"))
}

/// `ST_AsHEXWKB(geom)` as DuckDB computes it (upper-case hex of the WKB), which the planner's
/// deduplicate and sample order by.
fn hex_wkb(args: &[ColumnarValue]) -> Result<ColumnarValue, DataFusionError> {
    let arrays = ColumnarValue::values_to_arrays(args)?;
    let Some(array) = arrays.first() else {
        return Err(DataFusionError::Plan(
            "ST_AsHEXWKB takes one argument".into(),
        ));
    };
    let binary = cast(array, &DataType::Binary)?;
    let binary = binary
        .as_any()
        .downcast_ref::<BinaryArray>()
        .ok_or_else(|| DataFusionError::Plan("ST_AsHEXWKB of a non-binary column".into()))?;
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let hex: StringArray = binary
        .iter()
        .map(|value| {
            value.map(|bytes| {
                let mut text = String::with_capacity(bytes.len() * 2);
                for b in bytes {
                    text.push(char::from(DIGITS[usize::from(b >> 4)]));
                    text.push(char::from(DIGITS[usize::from(b & 15)]));
                }
                text
            })
        })
        .collect();
    Ok(ColumnarValue::Array(Arc::new(hex) as ArrayRef))
}

/// Runs `future` to completion on this blocking thread: on the runtime it belongs to, or on a
/// runtime of its own (tests, benches).
fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, NativeError> {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => Ok(handle.block_on(future)),
        Err(_) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map(|runtime| runtime.block_on(future))
            .map_err(|e| NativeError::Unsupported(format!("no runtime for DataFusion: {e}"))),
    }
}

/// Computes the relational `op` over `inputs` with DataFusion.
pub fn run(
    op: &Operator,
    inputs: &[&Layer],
    input_schemas: &[Option<Schema>],
    output: Option<&Schema>,
) -> Result<Layer, NativeError> {
    let main = inputs
        .first()
        .ok_or_else(|| NativeError::Unsupported(format!("{} without input", op.name())))?;
    let names: Vec<String> = (0..inputs.len()).map(|i| format!("input_{i}")).collect();
    let froms: Vec<String> = names.iter().map(|n| ident(n)).collect();
    let ins: Vec<Input<'_>> = froms
        .iter()
        .enumerate()
        .map(|(i, from)| Input {
            from,
            schema: input_schemas.get(i).and_then(Option::as_ref),
        })
        .collect();
    let query = select(op, &ins, output, Dialect::Duckdb).map_err(NativeError::Unsupported)?;
    let context = SessionContext::new();
    context.register_udf(create_udf(
        "st_ashexwkb",
        vec![DataType::Binary],
        DataType::Utf8,
        Volatility::Immutable,
        Arc::new(hex_wkb),
    ));
    for (name, layer) in names.iter().zip(inputs) {
        let table = MemTable::try_new(layer.schema.clone(), vec![layer.batches.clone()])
            .map_err(declined)?;
        context
            .register_table(name.as_str(), Arc::new(table))
            .map_err(declined)?;
    }
    let (schema, batches) = block_on(async {
        let frame = context.sql(&query).await?;
        let schema = Arc::new(frame.schema().as_arrow().clone());
        let batches = frame.collect().await?;
        Ok::<_, DataFusionError>((schema, batches))
    })?
    .map_err(declined)?;
    Layer::new(schema, batches, &main.geometry, main.crs.clone())
}
