//! A node's input layers written where every executor reads them: a directory per run stage
//! under the shared directory, the points in parts (one task each), the polygons as one
//! file, both GeoParquet. Removed when the stage is done.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::datatypes::Schema;
use datafusion::arrow::record_batch::RecordBatch;
use geomill_native::{Layer, NativeError, write_geoparquet};

use crate::udf::STAGED_GEOMETRY;

/// A stage's directory under the shared root, removed on drop.
pub struct StageDir {
    root: PathBuf,
    relative: PathBuf,
}

impl StageDir {
    /// A fresh directory `<root>/<run>/<stage>`.
    pub fn create(root: &Path, run: &str, stage: usize) -> Result<Self, NativeError> {
        let relative = PathBuf::from(safe_name(run)).join(format!("stage-{stage}"));
        let dir = root.join(&relative);
        fs::create_dir_all(&dir).map_err(|e| file_error(&dir, &e))?;
        // Absolute: the cluster's processes resolve the server's paths from elsewhere.
        let root = fs::canonicalize(root).map_err(|e| file_error(root, &e))?;
        Ok(Self { root, relative })
    }

    /// `name` in the directory, as the executors' functions name it (relative to the root).
    pub fn relative(&self, name: &str) -> String {
        self.relative.join(name).display().to_string()
    }

    /// `name` in the directory, as an absolute path.
    pub fn absolute(&self, name: &str) -> PathBuf {
        self.root.join(&self.relative).join(name)
    }
}

impl Drop for StageDir {
    fn drop(&mut self) {
        let dir = self.root.join(&self.relative);
        if let Err(e) = fs::remove_dir_all(&dir) {
            tracing::warn!(dir = %dir.display(), "cannot remove a stage's files: {e}");
        }
        if let Some(run) = dir.parent() {
            // Removed once its last stage is (fails quietly while another remains).
            let _ = fs::remove_dir(run);
        }
    }
}

/// A run id as a directory name (letters, digits, `-` and `_` only).
fn safe_name(run: &str) -> String {
    run.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn file_error(path: &Path, e: &std::io::Error) -> NativeError {
    NativeError::File {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// Writes `columns` of `layer` (the geometry first, renamed to the staged name) as `parts`
/// GeoParquet files of about equal rows in `dir/<name>/`; answers the directory.
pub fn write_parts(
    layer: &Layer,
    columns: &[String],
    parts: usize,
    dir: &StageDir,
    name: &str,
) -> Result<PathBuf, NativeError> {
    let projected = project(layer, columns)?;
    let target = dir.absolute(name);
    fs::create_dir_all(&target).map_err(|e| file_error(&target, &e))?;
    let total = projected.num_rows();
    let per_part = total.div_ceil(parts.max(1)).max(1);
    let mut part = 0;
    let mut current: Vec<RecordBatch> = Vec::new();
    let mut rows_in_part = 0;
    let flush = |batches: Vec<RecordBatch>, part: usize| {
        let piece = Layer::new(
            Arc::clone(&projected.schema),
            batches,
            STAGED_GEOMETRY,
            projected.crs.clone(),
        )?;
        write_geoparquet(&piece, &target.join(format!("part-{part:04}.parquet")))
    };
    for batch in &projected.batches {
        let mut offset = 0;
        while offset < batch.num_rows() {
            let take = (per_part - rows_in_part).min(batch.num_rows() - offset);
            current.push(batch.slice(offset, take));
            offset += take;
            rows_in_part += take;
            if rows_in_part == per_part {
                flush(std::mem::take(&mut current), part)?;
                part += 1;
                rows_in_part = 0;
            }
        }
    }
    if rows_in_part > 0 || part == 0 {
        flush(current, part)?;
    }
    Ok(target)
}

/// Writes the geometry of `layer` alone as `dir/<name>` (a GeoParquet file).
pub fn write_geometry(layer: &Layer, dir: &StageDir, name: &str) -> Result<(), NativeError> {
    let projected = project(layer, &[])?;
    write_geoparquet(&projected, &dir.absolute(name))
}

/// The geometry (as [`STAGED_GEOMETRY`]) and `columns` of `layer`.
fn project(layer: &Layer, columns: &[String]) -> Result<Layer, NativeError> {
    let geometry = layer.geometry_index()?;
    let mut indices = vec![geometry];
    for column in columns {
        let index = layer.column_index(column)?;
        if !indices.contains(&index) {
            indices.push(index);
        }
    }
    let mut fields: Vec<_> = indices
        .iter()
        .map(|&i| layer.schema.field(i).clone())
        .collect();
    fields[0] = fields[0].clone().with_name(STAGED_GEOMETRY);
    let schema = Arc::new(Schema::new(fields));
    let batches = layer
        .batches
        .iter()
        .map(|b| {
            RecordBatch::try_new(
                Arc::clone(&schema),
                indices.iter().map(|&i| Arc::clone(b.column(i))).collect(),
            )
            .map_err(|e| NativeError::Arrow(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Layer::new(schema, batches, STAGED_GEOMETRY, layer.crs.clone())
}
