//! The kernel of `ChangeDetection`: one row per changed region, its polygon and `diff_mean`.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, BinaryArray, Float64Array};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use geomill_planner::plan::ops::raster::ChangeDetectionOp;
use geomill_planner::schema::GEOM;

use crate::NativeError;
use crate::layer::Layer;
use crate::raster::change::changes;

pub fn run(op: &ChangeDetectionOp, inputs: &[&Layer]) -> Result<Layer, NativeError> {
    super::first(op, inputs)?;
    let before = Path::new(op.before.file().map_err(NativeError::Input)?);
    let after = Path::new(op.after.file().map_err(NativeError::Input)?);
    let found = changes(before, after, op.band, op.threshold)
        .map_err(|e| NativeError::Input(format!("change detection: {e}")))?;
    let means: Float64Array = found.iter().map(|c| Some(c.diff_mean)).collect();
    let polygons: BinaryArray = found.iter().map(|c| Some(c.wkb.as_slice())).collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("diff_mean", DataType::Float64, true),
        Field::new(GEOM, DataType::Binary, true),
    ]));
    let columns: Vec<ArrayRef> = vec![Arc::new(means), Arc::new(polygons)];
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(NativeError::arrow)?;
    Layer::new(schema, vec![batch], GEOM, op.before.crs.clone())
}
