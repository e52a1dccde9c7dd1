//! `geomill_polygon_rows(geom, polygons, predicate)`: the rows of a staged polygon layer a
//! point matches, computed by geomill's point-in-polygon kernel (an R-tree over the polygon
//! parts, exact ring tests). The scalar function every executor runs in a distributed
//! point-in-polygon aggregation; the polygons are read once per process from the shared
//! directory (never outside it) and kept prepared for the next batches.

use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{
    Array, ArrayRef, BinaryArray, BinaryViewArray, LargeBinaryArray, ListBuilder, UInt32Builder,
};
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use geomill_geometry::wkb;
use geomill_native::aggregate::{locate_rows, point_matches};
use geomill_native::{PreparedPolygons, prepare_polygons, read_geoparquet};
use geomill_planner::plan::operator::SpatialPredicate;

/// The function's name in plans.
pub const POLYGON_ROWS: &str = "geomill_polygon_rows";

/// The staged polygon layers a process keeps prepared (the stages of the runs in flight).
const KEPT: usize = 4;

/// The geometry column of a staged polygon file.
pub const STAGED_GEOMETRY: &str = "geom";

type Prepared = Arc<PreparedPolygons>;

/// The function, reading staged polygons under `root` (the directory every executor shares).
pub struct PolygonRows {
    root: PathBuf,
    signature: Signature,
    prepared: Mutex<Vec<(PathBuf, Prepared)>>,
}

impl std::fmt::Debug for PolygonRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolygonRows")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

impl PartialEq for PolygonRows {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root
    }
}

impl Eq for PolygonRows {}

impl std::hash::Hash for PolygonRows {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.root.hash(state);
    }
}

impl PolygonRows {
    pub fn new(root: PathBuf) -> Self {
        Self {
            root,
            signature: Signature::any(3, Volatility::Immutable),
            prepared: Mutex::new(Vec::new()),
        }
    }

    /// The function as DataFusion registers it.
    pub fn udf(root: PathBuf) -> ScalarUDF {
        ScalarUDF::new_from_impl(Self::new(root))
    }

    /// The prepared polygons of the staged file `relative` (a path under the root without
    /// `..`), read on first use.
    fn polygons(&self, relative: &str) -> Result<Prepared> {
        let path = confined(&self.root, relative)?;
        let mut kept = self
            .prepared
            .lock()
            .map_err(|_| DataFusionError::Execution("the polygon cache is poisoned".into()))?;
        if let Some((_, prepared)) = kept.iter().find(|(p, _)| *p == path) {
            return Ok(Arc::clone(prepared));
        }
        let layer = read_geoparquet(&path, Some(&[STAGED_GEOMETRY]))
            .map_err(|e| DataFusionError::Execution(e.to_string()))?;
        let prepared = Arc::new(
            prepare_polygons(&layer).map_err(|e| DataFusionError::Execution(e.to_string()))?,
        );
        if kept.len() >= KEPT {
            kept.remove(0);
        }
        kept.push((path, Arc::clone(&prepared)));
        Ok(prepared)
    }
}

/// `relative` under `root`, refused when it is absolute or climbs out.
fn confined(root: &Path, relative: &str) -> Result<PathBuf> {
    let path = Path::new(relative);
    if relative.is_empty() || !path.components().all(|c| matches!(c, Component::Normal(_))) {
        return exec_err!("{POLYGON_ROWS} reads staged files under the shared directory only");
    }
    Ok(root.join(path))
}

/// The predicate's name as the planner serialises it (`within`, `intersects`, ...).
fn predicate(name: &str) -> Result<SpatialPredicate> {
    serde_json::from_value(serde_json::Value::String(name.to_owned()))
        .map_err(|_| DataFusionError::Execution(format!("unknown spatial predicate {name}")))
}

fn literal(value: &ColumnarValue, what: &str) -> Result<String> {
    match value {
        ColumnarValue::Scalar(ScalarValue::Utf8(Some(s)))
        | ColumnarValue::Scalar(ScalarValue::Utf8View(Some(s)))
        | ColumnarValue::Scalar(ScalarValue::LargeUtf8(Some(s))) => Ok(s.clone()),
        _ => exec_err!("{POLYGON_ROWS} takes the {what} as a text literal"),
    }
}

/// The WKB bytes of row `i` of a binary column of any of Arrow's three layouts.
fn wkb_at(array: &dyn Array, i: usize) -> Option<&[u8]> {
    if array.is_null(i) {
        return None;
    }
    let any = array.as_any();
    if let Some(a) = any.downcast_ref::<BinaryViewArray>() {
        Some(a.value(i))
    } else if let Some(a) = any.downcast_ref::<BinaryArray>() {
        Some(a.value(i))
    } else {
        any.downcast_ref::<LargeBinaryArray>().map(|a| a.value(i))
    }
}

impl ScalarUDFImpl for PolygonRows {
    fn name(&self) -> &str {
        POLYGON_ROWS
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::List(Arc::new(Field::new_list_field(
            DataType::UInt32,
            true,
        ))))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [geometry, polygons, predicate_name] = args.args.as_slice() else {
            return exec_err!("{POLYGON_ROWS} takes (geometry, polygons, predicate)");
        };
        let prepared = self.polygons(&literal(polygons, "staged polygons")?)?;
        let name = literal(predicate_name, "predicate")?;
        let matches = point_matches(predicate(&name)?).ok_or_else(|| {
            DataFusionError::Execution(format!("{name} is not a point-in-polygon predicate"))
        })?;
        let geometries: ArrayRef = geometry.to_array(args.number_rows)?;
        let mut rows = ListBuilder::new(UInt32Builder::new());
        let mut hits = Vec::new();
        for i in 0..geometries.len() {
            let point = match wkb_at(geometries.as_ref(), i) {
                Some(bytes) => wkb::read_point(bytes)
                    .map_err(|e| DataFusionError::Execution(format!("geometry of row {i}: {e}")))?,
                None => None,
            };
            if let Some((x, y)) = point {
                locate_rows(&prepared, x, y, &mut hits);
                for &(row, location) in &hits {
                    if matches(location) {
                        rows.values().append_value(row);
                    }
                }
            }
            rows.append(true);
        }
        Ok(ColumnarValue::Array(Arc::new(rows.finish())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staged_files_are_read_under_the_root_only() {
        let root = Path::new("/srv/shared");
        assert_eq!(
            confined(root, "run/stage-0/polygons.parquet").ok(),
            Some(PathBuf::from("/srv/shared/run/stage-0/polygons.parquet"))
        );
        for hostile in ["../etc/passwd", "/etc/passwd", "run/../../x", "./x", ""] {
            assert!(confined(root, hostile).is_err(), "{hostile}");
        }
    }

    #[test]
    fn predicates_read_as_the_planner_writes_them() {
        assert_eq!(predicate("within").ok(), Some(SpatialPredicate::Within));
        assert_eq!(
            predicate("covered_by").ok(),
            Some(SpatialPredicate::CoveredBy)
        );
        assert!(predicate("near").is_err());
    }
}
