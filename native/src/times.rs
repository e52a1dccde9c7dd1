//! A column's values as times: seconds since 1970 (UTC) from timestamps, dates or ISO 8601
//! text, `None` where a value is NULL or not a time.

use arrow::array::{Array, TimestampSecondArray};
use arrow::compute::{CastOptions, cast_with_options};
use arrow::datatypes::{DataType, TimeUnit};

use super::NativeError;
use super::layer::Layer;

/// Every row's time in `field`, in seconds (whole seconds, as pandas' `datetime64[s]`).
pub fn seconds(layer: &Layer, field: &str) -> Result<Vec<Option<f64>>, NativeError> {
    let index = layer.column_index(field)?;
    let data_type = layer.schema.field(index).data_type();
    if data_type.is_numeric() || *data_type == DataType::Boolean {
        return Err(NativeError::Column {
            column: field.to_owned(),
            problem: format!("holds {data_type} values, not timestamps, dates or ISO 8601 text"),
        });
    }
    // Unreadable text becomes NULL rather than failing the step.
    let lenient = CastOptions {
        safe: true,
        ..CastOptions::default()
    };
    let to = DataType::Timestamp(TimeUnit::Second, None);
    let mut out = Vec::with_capacity(layer.num_rows());
    for batch in &layer.batches {
        let column = batch.column(index);
        let column = match column.data_type() {
            DataType::Timestamp(_, Some(_)) => {
                // Zoned timestamps: their UTC instant.
                cast_with_options(
                    column,
                    &DataType::Timestamp(TimeUnit::Second, Some("UTC".into())),
                    &lenient,
                )
                .and_then(|c| cast_with_options(&c, &to, &lenient))
            }
            _ => cast_with_options(column, &to, &lenient),
        }
        .map_err(NativeError::arrow)?;
        let values = column
            .as_any()
            .downcast_ref::<TimestampSecondArray>()
            .ok_or_else(|| NativeError::Column {
                column: field.to_owned(),
                problem: "does not hold times".into(),
            })?;
        out.extend(values.iter().map(|v| v.map(|s| s as f64)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, BinaryArray, RecordBatch, StringArray};
    use arrow::datatypes::{Field, Schema};

    use super::*;

    #[test]
    fn iso_text_and_dates_read_as_seconds() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("t", DataType::Utf8, true),
            Field::new("geom", DataType::Binary, true),
        ]));
        let times: ArrayRef = Arc::new(StringArray::from(vec![
            Some("1970-01-02"),
            Some("1970-01-01T01:00:00"),
            Some("not a time"),
            None,
        ]));
        let geoms: ArrayRef = Arc::new(BinaryArray::from(vec![None::<&[u8]>; 4]));
        let batch = RecordBatch::try_new(schema.clone(), vec![times, geoms]).unwrap();
        let layer = Layer::new(schema, vec![batch], "geom", None).unwrap();
        assert_eq!(
            seconds(&layer, "t").unwrap(),
            vec![Some(86_400.0), Some(3600.0), None, None]
        );
    }
}
