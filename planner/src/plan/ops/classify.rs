//! `Classify`: class breaks of a numeric field over every row (as mapclassify computes them),
//! then each row's class and its bounds. Native only: no SQL engine computes the breaks.

use crate::plan::ops::scale::{ClassColors, ClassMethod};
use crate::plan::owned::{OwnedOperator, with_columns};
use crate::schema::{FieldType, Schema};
use crate::sql::dialect::Dialect;

/// A classification of `field`'s values: `output` gets each row's class (0 for the lowest,
/// NULL for a NULL value), `<output>_lower` and `<output>_upper` its bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassifyOp {
    pub field: String,
    pub method: ClassMethod,
    /// Classes asked for (methods that choose their own count ignore it).
    pub classes: u32,
    pub output: String,
    /// A colour per class, from a named scheme, into a text field.
    pub colors: Option<ClassColors>,
    /// A field given, on every row, how many classes the breaks made.
    pub count: Option<String>,
}

impl ClassifyOp {
    /// The columns the operator adds: class, lower bound, upper bound (and the colour's, see
    /// [`ClassifyOp::colors`]).
    pub fn output_columns(&self) -> [String; 3] {
        [
            self.output.clone(),
            format!("{}_lower", self.output),
            format!("{}_upper", self.output),
        ]
    }
}

impl OwnedOperator for ClassifyOp {
    fn name(&self) -> &'static str {
        "Classify"
    }

    fn explain(&self) -> String {
        format!(
            "field={} method={} classes={} output={}{}{}",
            self.field,
            self.method.as_str(),
            self.classes,
            self.output,
            self.colors
                .as_ref()
                .map(|k| format!(
                    " colors={}{}→{}",
                    k.scheme,
                    if k.reverse { " reversed" } else { "" },
                    k.field
                ))
                .unwrap_or_default(),
            self.count
                .as_ref()
                .map(|c| format!(" count={c}"))
                .unwrap_or_default()
        )
    }

    fn reads(&self) -> Vec<String> {
        vec![self.field.clone()]
    }

    fn output_schema(&self, inputs: &[Option<&Schema>]) -> Option<Schema> {
        let [class, lower, upper] = self.output_columns();
        let color = self
            .colors
            .as_ref()
            .map(|c| (c.field.clone(), FieldType::Text));
        let count = self.count.clone().map(|c| (c, FieldType::Integer));
        with_columns(
            inputs,
            [
                (class, FieldType::Integer),
                (lower, FieldType::Double),
                (upper, FieldType::Double),
            ]
            .into_iter()
            .chain(color)
            .chain(count),
        )
    }

    fn native_only(&self) -> bool {
        true
    }

    fn sql_missing(&self, _dialect: Dialect) -> Option<String> {
        Some(format!(
            "classify ({}) runs on the native backend: no SQL engine computes its breaks",
            self.method.as_str()
        ))
    }

    fn native_kernel(&self) -> Result<String, String> {
        Ok(format!(
            "classify {} ({}, {} classes asked): breaks over every non-NULL value as mapclassify computes them, then each row's class by its bounds",
            self.field,
            self.method.as_str(),
            self.classes
        ))
    }
}
