//! `Head`: the first rows of the input in its order (a file's first points).

use crate::plan::owned::{OwnedOperator, first_input, first_schema};
use crate::schema::Schema;
use crate::sql::dialect::Dialect;
use crate::sql::input::Input;
use crate::sql::quote::ident;
use crate::sql::row_order::ROW_KEY;

/// Keeps the first `rows` rows in input order, every column unchanged.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadOp {
    pub rows: u64,
}

impl OwnedOperator for HeadOp {
    fn name(&self) -> &'static str {
        "Head"
    }

    fn explain(&self) -> String {
        format!("rows={}", self.rows)
    }

    fn reads(&self) -> Vec<String> {
        Vec::new()
    }

    fn output_schema(&self, inputs: &[Option<&Schema>]) -> Option<Schema> {
        first_schema(inputs).cloned()
    }

    /// DuckDB numbers the rows as it scans them (it keeps insertion order); PostgreSQL's
    /// scan of a freshly written table is in the order written.
    fn sql(
        &self,
        inputs: &[Input<'_>],
        _output: Option<&Schema>,
        dialect: Dialect,
    ) -> Result<String, String> {
        let main = first_input(inputs, self.name())?;
        let key = ident(ROW_KEY);
        Ok(match dialect {
            Dialect::Duckdb => format!(
                "SELECT t.* EXCLUDE ({key}) FROM (SELECT *, row_number() OVER () AS {key} FROM {}) AS t ORDER BY t.{key} LIMIT {}",
                main.from, self.rows
            ),
            Dialect::Postgis => format!("SELECT * FROM {} AS t LIMIT {}", main.from, self.rows),
        })
    }

    fn is_relational(&self) -> bool {
        true
    }
}
