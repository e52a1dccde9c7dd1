//! `pivot` whose columns are the values found in the data, as pandas' `pivot_table` makes them:
//! rows grouped by the index fields (NULL keys left out, groups sorted), one column per non-NULL
//! value of the column field (sorted), each cell the aggregate of its rows' non-NULL values, a
//! group none of whose cells has a value left out, empty cells filled.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray,
};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Schema};
use geomill_planner::plan::operator::{
    MAX_PIVOT_FOUND_COLUMNS as MAX_FOUND_COLUMNS, PivotFunc, PivotGeometry, PivotOp,
};
use serde_json::Value;

use super::NativeError;
use super::joins::tie_keys;
use super::layer::{Layer, Wkb};

/// One attribute value, ordered as pandas sorts a column of one type (numbers by value, then
/// text; booleans false first).
#[derive(Debug, Clone)]
enum Cell {
    Bool(bool),
    Number(f64),
    Integer(i64),
    Text(String),
}

impl Cell {
    fn rank(&self) -> u8 {
        match self {
            Self::Bool(_) => 0,
            Self::Number(_) | Self::Integer(_) => 1,
            Self::Text(_) => 2,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match self {
            Self::Number(x) => Some(*x),
            Self::Integer(i) => Some(*i as f64),
            Self::Bool(_) | Self::Text(_) => None,
        }
    }

    /// The text a column is named after (numbers as written, a whole float with `.0`, as
    /// Python prints them).
    fn name(&self) -> String {
        match self {
            Self::Bool(b) => b.to_string(),
            Self::Integer(i) => i.to_string(),
            Self::Number(x) if x.fract() == 0.0 && x.abs() < 1e16 => format!("{x:.1}"),
            Self::Number(x) => x.to_string(),
            Self::Text(s) => s.clone(),
        }
    }
}

impl PartialEq for Cell {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Cell {}

impl Ord for Cell {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::Bool(a), Self::Bool(b)) => a.cmp(b),
            (Self::Integer(a), Self::Integer(b)) => a.cmp(b),
            (Self::Text(a), Self::Text(b)) => a.cmp(b),
            (a, b) if a.rank() == 1 && b.rank() == 1 => a
                .as_f64()
                .unwrap_or_default()
                .total_cmp(&b.as_f64().unwrap_or_default()),
            (a, b) => a.rank().cmp(&b.rank()),
        }
    }
}

impl PartialOrd for Cell {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The kind of Arrow column a field's cells are read from and written back to.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Bool,
    Integer,
    Number,
    Text,
}

impl Kind {
    fn of(ty: &DataType) -> Self {
        if ty.is_integer() {
            Self::Integer
        } else if ty.is_floating()
            || matches!(ty, DataType::Decimal128(..) | DataType::Decimal256(..))
        {
            Self::Number
        } else if *ty == DataType::Boolean {
            Self::Bool
        } else {
            Self::Text
        }
    }

    fn arrow(self) -> DataType {
        match self {
            Self::Bool => DataType::Boolean,
            Self::Integer => DataType::Int64,
            Self::Number => DataType::Float64,
            Self::Text => DataType::Utf8,
        }
    }
}

/// The cells of `field` in row order (NULL and NaN as `None`), with their kind.
fn cells(layer: &Layer, field: &str) -> Result<(Kind, Vec<Option<Cell>>), NativeError> {
    let index = layer.column_index(field)?;
    let kind = Kind::of(layer.schema.field(index).data_type());
    let mut out = Vec::with_capacity(layer.num_rows());
    for batch in &layer.batches {
        let array = cast(batch.column(index), &kind.arrow()).map_err(NativeError::arrow)?;
        let wrong = || NativeError::Arrow(format!("a cast of {field} gave another type"));
        match kind {
            Kind::Bool => {
                let a = array
                    .as_any()
                    .downcast_ref::<BooleanArray>()
                    .ok_or_else(wrong)?;
                out.extend(a.iter().map(|v| v.map(Cell::Bool)));
            }
            Kind::Integer => {
                let a = array
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .ok_or_else(wrong)?;
                out.extend(a.iter().map(|v| v.map(Cell::Integer)));
            }
            Kind::Number => {
                let a = array
                    .as_any()
                    .downcast_ref::<Float64Array>()
                    .ok_or_else(wrong)?;
                out.extend(
                    a.iter()
                        .map(|v| v.filter(|x| !x.is_nan()).map(Cell::Number)),
                );
            }
            Kind::Text => {
                let a = array
                    .as_any()
                    .downcast_ref::<StringArray>()
                    .ok_or_else(wrong)?;
                out.extend(a.iter().map(|v| v.map(|s| Cell::Text(s.to_owned()))));
            }
        }
    }
    Ok((kind, out))
}

/// A column of `kind` from `values`.
fn array(kind: Kind, values: &[Option<Cell>]) -> ArrayRef {
    match kind {
        Kind::Bool => Arc::new(
            values
                .iter()
                .map(|v| match v {
                    Some(Cell::Bool(b)) => Some(*b),
                    _ => None,
                })
                .collect::<BooleanArray>(),
        ),
        Kind::Integer => Arc::new(
            values
                .iter()
                .map(|v| match v {
                    Some(Cell::Integer(i)) => Some(*i),
                    _ => None,
                })
                .collect::<Int64Array>(),
        ),
        Kind::Number => Arc::new(
            values
                .iter()
                .map(|v| v.as_ref().and_then(Cell::as_f64))
                .collect::<Float64Array>(),
        ),
        Kind::Text => Arc::new(
            values
                .iter()
                .map(|v| match v {
                    Some(Cell::Text(s)) => Some(s.clone()),
                    Some(other) => Some(other.name()),
                    None => None,
                })
                .collect::<StringArray>(),
        ),
    }
}

/// `func` over one cell's values (non-NULL, in row order), with the kind of the result.
fn aggregate(func: PivotFunc, values: &[Cell]) -> Option<Cell> {
    let numbers = || values.iter().filter_map(Cell::as_f64);
    match func {
        PivotFunc::Count => Some(Cell::Integer(values.len() as i64)),
        PivotFunc::Sum if values.iter().all(|v| matches!(v, Cell::Integer(_))) => {
            Some(Cell::Integer(
                values
                    .iter()
                    .filter_map(|v| match v {
                        Cell::Integer(i) => Some(*i),
                        _ => None,
                    })
                    .fold(0i64, i64::wrapping_add),
            ))
        }
        PivotFunc::Sum => Some(Cell::Number(numbers().sum())),
        PivotFunc::Avg | PivotFunc::Mean => {
            (!values.is_empty()).then(|| Cell::Number(numbers().sum::<f64>() / values.len() as f64))
        }
        PivotFunc::Median => {
            let mut sorted: Vec<f64> = numbers().collect();
            if sorted.is_empty() {
                return None;
            }
            sorted.sort_by(f64::total_cmp);
            let middle = sorted.len() / 2;
            Some(Cell::Number(if sorted.len() % 2 == 1 {
                sorted[middle]
            } else {
                (sorted[middle - 1] + sorted[middle]) / 2.0
            }))
        }
        PivotFunc::Min => values.iter().min().cloned(),
        PivotFunc::Max => values.iter().max().cloned(),
        PivotFunc::First => values.first().cloned(),
        PivotFunc::Last => values.last().cloned(),
    }
}

/// The kind of a cell column: what `func` makes of values of `kind`.
fn result_kind(func: PivotFunc, kind: Kind) -> Kind {
    match func {
        PivotFunc::Count => Kind::Integer,
        PivotFunc::Avg | PivotFunc::Mean | PivotFunc::Median => Kind::Number,
        PivotFunc::Sum if kind == Kind::Integer => Kind::Integer,
        PivotFunc::Sum => Kind::Number,
        _ => kind,
    }
}

/// `fill` as a cell of a column of `kind`.
fn fill_cell(fill: &Value, kind: Kind) -> Result<Cell, NativeError> {
    let bad = || {
        NativeError::Input(format!(
            "pivot: fill_value {fill} does not fit the cells' type"
        ))
    };
    Ok(match (kind, fill) {
        (Kind::Text, Value::String(s)) => Cell::Text(s.clone()),
        (Kind::Text, other) => Cell::Text(other.to_string()),
        (Kind::Bool, Value::Bool(b)) => Cell::Bool(*b),
        (Kind::Integer, Value::Number(n)) => match n.as_i64() {
            Some(i) => Cell::Integer(i),
            None => return Err(bad()),
        },
        (Kind::Number, Value::Number(n)) => Cell::Number(n.as_f64().ok_or_else(bad)?),
        _ => return Err(bad()),
    })
}

/// One group of rows: its first row and the values of each value found, in row order.
struct Group {
    first_row: usize,
    cells: BTreeMap<Cell, Vec<Cell>>,
}

/// One output row: the group's key, its first row and its cells, one per value found.
struct Row {
    key: Vec<Cell>,
    first_row: usize,
    cells: Vec<Option<Cell>>,
}

/// The pivot of `layer` by `op`, its columns the values of `op.columns` found in the data.
pub fn pivot(layer: &Layer, op: &PivotOp) -> Result<Layer, NativeError> {
    let mut kinds = Vec::with_capacity(op.index.len());
    let mut fields_cells = Vec::with_capacity(op.index.len());
    for field in &op.index {
        let (kind, cells) = cells(layer, field)?;
        kinds.push(kind);
        fields_cells.push(cells);
    }
    // Each row's group key (`None` when an index field is NULL).
    let row_keys: Vec<Option<Vec<Cell>>> = (0..layer.num_rows())
        .map(|row| {
            fields_cells
                .iter()
                .map(|cells| cells[row].clone())
                .collect()
        })
        .collect();
    let (_, categories) = cells(layer, &op.columns)?;
    let (value_kind, values) = cells(layer, &op.values)?;
    // Groups in sorted order; each cell's values in row order; each group's first row.
    let mut groups: BTreeMap<Vec<Cell>, Group> = BTreeMap::new();
    let mut found: BTreeSet<Cell> = BTreeSet::new();
    for row in 0..layer.num_rows() {
        let Some(key) = row_keys[row].clone() else {
            continue;
        };
        let Some(category) = categories[row].clone() else {
            continue;
        };
        if found.len() == MAX_FOUND_COLUMNS && !found.contains(&category) {
            return Err(NativeError::Input(format!(
                "pivot: {} has more than {MAX_FOUND_COLUMNS} distinct values (at most {MAX_FOUND_COLUMNS} columns): list the ones wanted in column_values",
                op.columns
            )));
        }
        found.insert(category.clone());
        let group = groups.entry(key).or_insert_with(|| Group {
            first_row: row,
            cells: BTreeMap::new(),
        });
        let cell = group.cells.entry(category).or_default();
        if let Some(value) = &values[row] {
            cell.push(value.clone());
        }
    }
    let kind = result_kind(op.func, value_kind);
    let fill = op.fill.as_ref().map(|f| fill_cell(f, kind)).transpose()?;
    let found: Vec<Cell> = found.into_iter().collect();
    // Each group's cells; a group none of whose cells has a value is left out (pandas drops
    // the all-NaN rows), then a column none of whose cells has one; then the fill.
    let mut rows: Vec<Row> = Vec::new();
    for (key, group) in groups {
        // A value without rows in the group is a missing cell, not an empty aggregate.
        let cells: Vec<Option<Cell>> = found
            .iter()
            .map(|c| {
                group
                    .cells
                    .get(c)
                    .and_then(|values| aggregate(op.func, values))
            })
            .collect();
        if cells.iter().any(Option::is_some) {
            rows.push(Row {
                key,
                first_row: group.first_row,
                cells,
            });
        }
    }
    let kept: Vec<usize> = (0..found.len())
        .filter(|&c| rows.iter().any(|row| row.cells[c].is_some()))
        .collect();
    for row in &mut rows {
        for cell in row.cells.iter_mut().filter(|c| c.is_none()) {
            cell.clone_from(&fill);
        }
    }
    let geometries = group_geometries(layer, op, &row_keys, &rows)?;
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for (i, name) in op.index.iter().enumerate() {
        let kind = kinds[i];
        fields.push(Field::new(name, kind.arrow(), true));
        let column: Vec<Option<Cell>> = rows.iter().map(|row| Some(row.key[i].clone())).collect();
        columns.push(array(kind, &column));
    }
    for &c in &kept {
        let name = format!("{}{}", op.prefix, found[c].name());
        if op.index.contains(&name) || name == layer.geometry {
            return Err(NativeError::Input(format!(
                "pivot: the column {name} (a value of {}) would appear twice: give a prefix",
                op.columns
            )));
        }
        fields.push(Field::new(&name, kind.arrow(), true));
        let column: Vec<Option<Cell>> = rows.iter().map(|row| row.cells[c].clone()).collect();
        columns.push(array(kind, &column));
    }
    fields.push(Field::new(&layer.geometry, DataType::Binary, true));
    columns.push(Arc::new(
        geometries
            .iter()
            .map(Option::as_deref)
            .collect::<BinaryArray>(),
    ));
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(NativeError::arrow)?;
    Layer::new(schema, vec![batch], &layer.geometry, layer.crs.clone())
}

/// Each output row's geometry: its group's first row's, or the one whose WKB hashes lowest.
fn group_geometries(
    layer: &Layer,
    op: &PivotOp,
    row_keys: &[Option<Vec<Cell>>],
    rows: &[Row],
) -> Result<Vec<Option<Vec<u8>>>, NativeError> {
    let geom = layer.geometry_index()?;
    let mut all: Vec<Option<Vec<u8>>> = Vec::with_capacity(layer.num_rows());
    for batch in &layer.batches {
        let wkbs = Wkb::of(batch, geom)?;
        all.extend((0..wkbs.len()).map(|i| wkbs.get(i).map(<[u8]>::to_vec)));
    }
    match op.geometry {
        PivotGeometry::First => Ok(rows.iter().map(|row| all[row.first_row].clone()).collect()),
        PivotGeometry::Hash => {
            let hashes = tie_keys(layer)?;
            let mut best: BTreeMap<&[Cell], usize> = BTreeMap::new();
            for (row, key) in row_keys.iter().enumerate() {
                let (Some(key), Some(_)) = (key, &all[row]) else {
                    continue;
                };
                let entry = best.entry(key.as_slice()).or_insert(row);
                if hashes[row] < hashes[*entry] {
                    *entry = row;
                }
            }
            Ok(rows
                .iter()
                .map(|row| best.get(row.key.as_slice()).and_then(|&at| all[at].clone()))
                .collect())
        }
    }
}
