//! `RankIn`: each row's value ranked among the distinct values of a field of the second input
//! (the ring a value falls in, for `classify_by_ring`). SQL on every dialect; no kernel.

use crate::plan::owned::{OwnedOperator, with_columns};
use crate::schema::{FieldType, Schema};
use crate::sql::dialect::Dialect;
use crate::sql::input::Input;
use crate::sql::parts::projection_with_geom;
use crate::sql::quote::ident;
use crate::sql::row_order::{ROW_KEY, numbered};

/// `output`: the rank of each row's `field` among the distinct non-NULL values of the second
/// input's `values` (1 for the smallest, compared as numbers), or their count + 1 when it is
/// not one of them; the rows and their order unchanged.
#[derive(Debug, Clone, PartialEq)]
pub struct RankInOp {
    pub field: String,
    pub values: String,
    pub output: String,
}

impl OwnedOperator for RankInOp {
    fn name(&self) -> &'static str {
        "RankIn"
    }

    fn explain(&self) -> String {
        format!(
            "field={} among=other.{} output={}",
            self.field, self.values, self.output
        )
    }

    fn reads(&self) -> Vec<String> {
        vec![self.field.clone(), self.values.clone()]
    }

    fn arity(&self) -> Option<usize> {
        Some(2)
    }

    fn output_schema(&self, inputs: &[Option<&Schema>]) -> Option<Schema> {
        with_columns(inputs, [(self.output.clone(), FieldType::Integer)])
    }

    /// A left join to the ranked distinct values, the rows kept in their order.
    fn sql(
        &self,
        inputs: &[Input<'_>],
        _output: Option<&Schema>,
        dialect: Dialect,
    ) -> Result<String, String> {
        let [main, other] = inputs else {
            return Err("RankIn needs two inputs".to_owned());
        };
        let number = |column: &str| format!("CAST({column} AS DOUBLE PRECISION)");
        let values = ident(&self.values);
        let distinct = format!(
            "SELECT DISTINCT {} AS v FROM {} AS o WHERE o.{values} IS NOT NULL",
            number(&format!("o.{values}")),
            other.from
        );
        let geom = format!("t.{}", ident(crate::schema::GEOM));
        let projection = projection_with_geom("t.", main.schema, &geom, dialect, &[ROW_KEY])?;
        Ok(format!(
            "SELECT {projection}, CAST(coalesce(r.k, (SELECT count(*) FROM ({distinct}) AS c) + 1) AS BIGINT) AS {} \
             FROM {} AS t LEFT JOIN (SELECT d.v, row_number() OVER (ORDER BY d.v) AS k FROM ({distinct}) AS d) AS r \
             ON {} = r.v ORDER BY t.{}",
            ident(&self.output),
            numbered(main.from),
            number(&format!("t.{}", ident(&self.field))),
            ident(ROW_KEY)
        ))
    }
}
