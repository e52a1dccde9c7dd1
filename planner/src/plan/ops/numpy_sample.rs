//! `NumpySample`: NumPy's (and so pandas') reproducible sample of a layer's rows. Computed by the
//! native kernel on every engine: no SQL engine draws as NumPy does.

use crate::plan::owned::{OwnedOperator, first_schema};
use crate::schema::Schema;
use crate::sql::dialect::Dialect;

/// NumPy's legacy `RandomState(seed)` sample of a layer's rows, as pandas' `sample` draws it:
/// MT19937 seeded with `seed`, the row numbers shuffled (Fisher–Yates, from the last row) and
/// the first `size` taken in that shuffled order; with `replace`, `size` row numbers drawn
/// independently.
#[derive(Debug, Clone, PartialEq)]
pub struct NumpySampleOp {
    pub size: SampleSize,
    pub seed: u32,
    pub replace: bool,
}

/// How many rows a sample takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SampleSize {
    /// This many (all of them when there are fewer, without replacement).
    Rows(u64),
    /// This fraction of the rows, rounded half to even (Python's `round`).
    Fraction(f64),
}

impl OwnedOperator for NumpySampleOp {
    fn name(&self) -> &'static str {
        "NumpySample"
    }

    fn explain(&self) -> String {
        format!(
            "size={:?} seed={} replace={}",
            self.size, self.seed, self.replace
        )
    }

    fn reads(&self) -> Vec<String> {
        Vec::new()
    }

    fn output_schema(&self, inputs: &[Option<&Schema>]) -> Option<Schema> {
        first_schema(inputs).cloned()
    }

    fn native_only(&self) -> bool {
        true
    }

    fn sql_missing(&self, _dialect: Dialect) -> Option<String> {
        Some(
            "NumPy's sample runs on the native backend: it draws from the rows in their order"
                .to_owned(),
        )
    }

    fn native_kernel(&self) -> Result<String, String> {
        Ok(format!(
            "NumPy's legacy MT19937 (seed {}): the row numbers shuffled or drawn, rows gathered with Arrow take",
            self.seed
        ))
    }
}
