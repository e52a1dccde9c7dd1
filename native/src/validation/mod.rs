//! Validation reports computed natively: rows read in input order, checked with GEOS's own
//! predicates ([`topology::shapely_topology`]), paired as GeoPandas scripts pair duplicates
//! ([`duplicates::first_in_row_order`]) or with attribute values read as Python reads them
//! ([`python_rules::python_rules`]); the report has the columns of every validation step
//! (`feature`, `related`, `problem`, `field`, `reason`, `geom`; Python's rules add `value`).

mod duplicates;
mod python_rules;
mod python_text;
mod topology;

use std::sync::Arc;

use arrow::array::{ArrayRef, BinaryArray, Int64Array, RecordBatch, StringArray, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema};
use geos::Geometry;

use super::NativeError;
use super::geos_base::to_geos;
use super::layer::{Layer, Wkb};
use geomill_planner::plan::validate::{
    DuplicateMatch, FEATURE, FIELD, FeatureKey, PROBLEM, REASON, RELATED, TopologyPredicates,
    VALUE, ValidateCheck, ValidateOp,
};
use geomill_planner::schema::GEOM;

/// One problem found: the rows it is about, its kind, its reason and its geometry.
struct Problem {
    feature: usize,
    related: Option<usize>,
    problem: &'static str,
    /// The field an attribute problem is about.
    field: Option<String>,
    /// The offending value as text (Python's rules only).
    value: Option<String>,
    reason: String,
    geom: Option<Vec<u8>>,
}

/// The input's rows in one batch, with each row's stored WKB.
struct Rows {
    batch: RecordBatch,
    wkb: Vec<Option<Vec<u8>>>,
}

impl Rows {
    fn read(layer: &Layer) -> Result<Self, NativeError> {
        let batch = arrow::compute::concat_batches(&layer.schema, &layer.batches)
            .map_err(NativeError::arrow)?;
        let wkbs = Wkb::of(&batch, layer.geometry_index()?)?;
        let wkb = (0..wkbs.len())
            .map(|i| wkbs.get(i).map(<[u8]>::to_vec))
            .collect();
        Ok(Self { batch, wkb })
    }

    /// Each row's GEOS geometry (`None` for NULL).
    fn geometries(&self) -> Result<Vec<Option<Geometry>>, NativeError> {
        self.wkb
            .iter()
            .enumerate()
            .map(|(row, bytes)| bytes.as_deref().map(|b| to_geos(b, row)).transpose())
            .collect()
    }
}

/// The report of `op` (a check only the native backend computes) over `layer`.
pub fn validate(layer: &Layer, op: &ValidateOp) -> Result<Layer, NativeError> {
    if op.summary {
        return Err(NativeError::Input(format!(
            "{}: summary is not available with this rule; count the report's rows instead",
            op.describe()
        )));
    }
    let rows = Rows::read(layer)?;
    let problems = match &op.check {
        ValidateCheck::Duplicates {
            tolerance,
            rule: DuplicateMatch::FirstInRowOrder,
        } => duplicates::first_in_row_order(&rows, *tolerance)?,
        ValidateCheck::Topology {
            checks,
            predicates: TopologyPredicates::Shapely,
            ..
        } => topology::shapely_topology(&rows, checks)?,
        ValidateCheck::PythonAttributes { rules } => {
            python_rules::python_rules(layer, &rows, rules)?
        }
        _ => {
            return Err(NativeError::Declined(format!(
                "{} (SQL: it runs on the SQL engine)",
                op.describe()
            )));
        }
    };
    let with_value = matches!(op.check, ValidateCheck::PythonAttributes { .. });
    report(layer, &rows, &op.key, &problems, with_value)
}

/// The problems as a layer, features named by `key`.
fn report(
    layer: &Layer,
    rows: &Rows,
    key: &FeatureKey,
    problems: &[Problem],
    with_value: bool,
) -> Result<Layer, NativeError> {
    let keys = |pick: &dyn Fn(&Problem) -> Option<usize>| -> Result<ArrayRef, NativeError> {
        match key {
            FeatureKey::Position => Ok(Arc::new(
                problems
                    .iter()
                    .map(|p| pick(p).map(|row| row as i64))
                    .collect::<Int64Array>(),
            )),
            FeatureKey::Field(name) => {
                let column = rows.batch.column(layer.column_index(name)?);
                let indices: UInt64Array = problems
                    .iter()
                    .map(|p| pick(p).map(|row| row as u64))
                    .collect();
                arrow::compute::take(column, &indices, None).map_err(NativeError::arrow)
            }
        }
    };
    let feature = keys(&|p| Some(p.feature))?;
    let related = keys(&|p| p.related)?;
    let texts = |pick: &dyn Fn(&Problem) -> Option<&str>| -> ArrayRef {
        Arc::new(problems.iter().map(pick).collect::<StringArray>())
    };
    let mut fields = vec![
        Field::new(FEATURE, feature.data_type().clone(), true),
        Field::new(RELATED, related.data_type().clone(), true),
        Field::new(PROBLEM, DataType::Utf8, true),
        Field::new(FIELD, DataType::Utf8, true),
    ];
    let mut columns: Vec<ArrayRef> = vec![
        feature,
        related,
        texts(&|p| Some(p.problem)),
        texts(&|p| p.field.as_deref()),
    ];
    if with_value {
        fields.push(Field::new(VALUE, DataType::Utf8, true));
        columns.push(texts(&|p| p.value.as_deref()));
    }
    fields.push(Field::new(REASON, DataType::Utf8, true));
    columns.push(texts(&|p| Some(p.reason.as_str())));
    fields.push(Field::new(GEOM, DataType::Binary, true));
    columns.push(Arc::new(
        problems
            .iter()
            .map(|p| p.geom.as_deref())
            .collect::<BinaryArray>(),
    ));
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(NativeError::arrow)?;
    Layer::new(schema, vec![batch], GEOM, layer.crs.clone())
}
