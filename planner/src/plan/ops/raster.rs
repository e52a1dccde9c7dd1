//! The raster steps that write a raster (clip, NDVI, reproject, merge: one row describing the
//! raster dataset written) and change detection (polygons where two rasters differ): operators
//! only the native backend computes, GDAL reading and writing the files.

use crate::plan::owned::OwnedOperator;
use crate::schema::{Column, FieldType, GEOM, Schema};
use crate::sql::dialect::Dialect;

/// The raster a step reads: as the step names it, and what the server resolved it to (`None`
/// while planning without the server's catalog: a preview).
#[derive(Debug, Clone, PartialEq)]
pub struct RasterRef {
    pub name: String,
    /// The stored file.
    pub path: Option<String>,
    /// `EPSG:<code>` when its CRS has one.
    pub crs: Option<String>,
}

impl RasterRef {
    /// The file, or the error saying the name was not resolved.
    pub fn file(&self) -> Result<&str, String> {
        self.path.as_deref().ok_or_else(|| {
            format!(
                "raster {} was not resolved to a raster dataset of this server",
                self.name
            )
        })
    }
}

/// The raster dataset a step writes: its name, and the file the server gave it (`None` when the
/// run may not write rasters: a preview or a check).
#[derive(Debug, Clone, PartialEq)]
pub struct RasterTarget {
    pub name: String,
    pub path: Option<String>,
}

impl RasterTarget {
    /// The file to write, or the error saying this run writes none.
    pub fn file(&self) -> Result<&str, String> {
        self.path.as_deref().ok_or_else(|| {
            format!(
                "raster {} is written only by a run of the server (a pipeline execution or a job)",
                self.name
            )
        })
    }
}

/// How cells are resampled when a raster is warped (GDAL's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resampling {
    Nearest,
    Bilinear,
    Cubic,
    Lanczos,
    Average,
    Mode,
}

impl Resampling {
    pub const ALL: [Resampling; 6] = [
        Resampling::Nearest,
        Resampling::Bilinear,
        Resampling::Cubic,
        Resampling::Lanczos,
        Resampling::Average,
        Resampling::Mode,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Resampling::Nearest => "nearest",
            Resampling::Bilinear => "bilinear",
            Resampling::Cubic => "cubic",
            Resampling::Lanczos => "lanczos",
            Resampling::Average => "average",
            Resampling::Mode => "mode",
        }
    }

    pub fn parse(name: &str) -> Option<Resampling> {
        Resampling::ALL.into_iter().find(|r| r.name() == name)
    }
}

/// How overlapping rasters combine in a merge (rasterio.merge's methods).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeMethod {
    /// The first raster with data at a cell.
    First,
    /// The last raster with data at a cell.
    Last,
    Min,
    Max,
    Sum,
    /// How many rasters have data at a cell.
    Count,
}

impl MergeMethod {
    pub const ALL: [MergeMethod; 6] = [
        MergeMethod::First,
        MergeMethod::Last,
        MergeMethod::Min,
        MergeMethod::Max,
        MergeMethod::Sum,
        MergeMethod::Count,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MergeMethod::First => "first",
            MergeMethod::Last => "last",
            MergeMethod::Min => "min",
            MergeMethod::Max => "max",
            MergeMethod::Sum => "sum",
            MergeMethod::Count => "count",
        }
    }

    pub fn parse(name: &str) -> Option<MergeMethod> {
        MergeMethod::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// What a raster-writing step computes.
#[derive(Debug, Clone, PartialEq)]
pub enum RasterTask {
    /// The raster's cells under the input's polygons (others set to nodata), cropped to them.
    Clip {
        raster: RasterRef,
        all_touched: bool,
        crop: bool,
        nodata: Option<f64>,
    },
    /// (NIR − red) / (NIR + red) as float32, NaN where either band is nodata or the sum is 0.
    Ndvi {
        raster: RasterRef,
        red_band: usize,
        nir_band: usize,
    },
    /// The raster warped to `target_crs` on GDAL's suggested grid.
    Reproject {
        raster: RasterRef,
        target_crs: String,
        resampling: Resampling,
    },
    /// The rasters on one grid covering them all, combined by `method`.
    Merge {
        rasters: Vec<RasterRef>,
        method: MergeMethod,
        nodata: Option<f64>,
    },
}

impl RasterTask {
    /// The columns of the result row besides `output_path`, `raster` and the geometry.
    fn extra_columns(&self) -> Vec<(&'static str, FieldType)> {
        match self {
            RasterTask::Clip { .. } => Vec::new(),
            RasterTask::Ndvi { .. } => vec![
                ("ndvi_min", FieldType::Double),
                ("ndvi_max", FieldType::Double),
                ("ndvi_mean", FieldType::Double),
            ],
            RasterTask::Reproject { .. } => vec![("target_crs", FieldType::Text)],
            RasterTask::Merge { .. } => vec![("n_sources", FieldType::Integer)],
        }
    }

    /// The CRS of the raster written, when it is an EPSG code.
    fn crs(&self) -> Option<String> {
        match self {
            RasterTask::Clip { raster, .. } | RasterTask::Ndvi { raster, .. } => raster.crs.clone(),
            RasterTask::Reproject { target_crs, .. } => {
                target_crs.starts_with("EPSG:").then(|| target_crs.clone())
            }
            RasterTask::Merge { rasters, .. } => rasters.first().and_then(|r| r.crs.clone()),
        }
    }

    fn describe(&self) -> String {
        match self {
            RasterTask::Clip {
                raster,
                all_touched,
                crop,
                ..
            } => format!(
                "clip raster {} to the features ({}{})",
                raster.name,
                if *all_touched {
                    "every touched cell"
                } else {
                    "cells whose centre is inside"
                },
                if *crop { ", cropped" } else { "" }
            ),
            RasterTask::Ndvi {
                raster,
                red_band,
                nir_band,
            } => format!(
                "NDVI of raster {} (red band {red_band}, NIR band {nir_band})",
                raster.name
            ),
            RasterTask::Reproject {
                raster,
                target_crs,
                resampling,
            } => format!(
                "warp raster {} to {target_crs} ({} resampling)",
                raster.name,
                resampling.name()
            ),
            RasterTask::Merge {
                rasters, method, ..
            } => {
                let names: Vec<&str> = rasters.iter().map(|r| r.name.as_str()).collect();
                format!("merge rasters {} ({})", names.join(", "), method.name())
            }
        }
    }
}

/// A raster step that writes a raster dataset and answers one row: `output_path` and `raster`
/// (the dataset's name), the step's figures, and the raster's bounds as the geometry.
#[derive(Debug, Clone, PartialEq)]
pub struct RasterWriteOp {
    pub task: RasterTask,
    pub target: RasterTarget,
}

impl RasterWriteOp {
    /// The columns of the result row, in order.
    pub fn columns(&self) -> Vec<(&'static str, FieldType)> {
        let mut columns = vec![
            ("output_path", FieldType::Text),
            ("raster", FieldType::Text),
        ];
        columns.extend(self.task.extra_columns());
        columns.push((GEOM, FieldType::Geometry));
        columns
    }
}

fn schema_of(columns: &[(&str, FieldType)], crs: Option<String>) -> Schema {
    Schema {
        columns: columns
            .iter()
            .map(|(name, ty)| Column {
                name: (*name).to_owned(),
                ty: *ty,
            })
            .collect(),
        crs,
    }
}

impl OwnedOperator for RasterWriteOp {
    fn name(&self) -> &'static str {
        "RasterWrite"
    }

    fn explain(&self) -> String {
        format!("{} into raster {}", self.task.describe(), self.target.name)
    }

    fn reads(&self) -> Vec<String> {
        Vec::new()
    }

    fn output_schema(&self, _inputs: &[Option<&Schema>]) -> Option<Schema> {
        Some(schema_of(&self.columns(), self.task.crs()))
    }

    fn native_only(&self) -> bool {
        true
    }

    fn sql_missing(&self, _dialect: Dialect) -> Option<String> {
        Some(format!(
            "{} runs on the native backend: GDAL reads and writes the raster files, which no SQL engine of the run holds",
            self.task.describe()
        ))
    }

    fn native_kernel(&self) -> Result<String, String> {
        Ok(format!(
            "{}: GDAL, block by block, written as a Cloud-Optimised GeoTIFF",
            self.task.describe()
        ))
    }
}

/// Polygons of the cells where two rasters' band differs by more than `threshold` (4-connected
/// regions), each with the mean absolute difference of its cells.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeDetectionOp {
    pub before: RasterRef,
    pub after: RasterRef,
    /// 1-based.
    pub band: usize,
    pub threshold: f64,
}

impl ChangeDetectionOp {
    fn describe(&self) -> String {
        format!(
            "cells of band {} where rasters {} and {} differ by more than {}",
            self.band, self.before.name, self.after.name, self.threshold
        )
    }
}

impl OwnedOperator for ChangeDetectionOp {
    fn name(&self) -> &'static str {
        "ChangeDetection"
    }

    fn explain(&self) -> String {
        self.describe()
    }

    fn reads(&self) -> Vec<String> {
        Vec::new()
    }

    fn output_schema(&self, _inputs: &[Option<&Schema>]) -> Option<Schema> {
        Some(schema_of(
            &[
                ("diff_mean", FieldType::Double),
                (GEOM, FieldType::Geometry),
            ],
            self.before.crs.clone(),
        ))
    }

    fn native_only(&self) -> bool {
        true
    }

    fn sql_missing(&self, _dialect: Dialect) -> Option<String> {
        Some(format!(
            "{} runs on the native backend: GDAL reads the raster files, which no SQL engine of the run holds",
            self.describe()
        ))
    }

    fn native_kernel(&self) -> Result<String, String> {
        Ok(format!(
            "{}: the changed cells labelled by region and polygonised by GDAL",
            self.describe()
        ))
    }
}
