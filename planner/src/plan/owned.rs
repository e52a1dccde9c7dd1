//! Operators that own their parts: an [`OwnedOperator`] carries its EXPLAIN text, reads, schema
//! inference, SQL per dialect and native kernel binding, and the plan's [`Operator::Owned`]
//! variant delegates every shared site (EXPLAIN, schema inference, the SELECT emitter, the
//! engine assignment, the native dispatcher) to it. A new operator is its file in `plan/ops/`
//! and a line there, plus, when a kernel computes it, the kernel's file in the native crate's
//! `owned/` and a line there.
//!
//! The operators older than this trait are still variants of [`Operator`] matched at each site;
//! they move here one by one as they are next changed.
//!
//! [`Operator::Owned`]: super::operator::Operator::Owned
//! [`Operator`]: super::operator::Operator

use std::any::Any;
use std::fmt::Debug;
use std::sync::Arc;

use crate::schema::{FieldType, Schema};
use crate::sql::dialect::Dialect;
use crate::sql::input::Input;

/// One operator with all its parts. Implementors are plain data (`Debug + PartialEq`): plans
/// compare and print their nodes.
pub trait OwnedOperator: Debug + Send + Sync + Identity {
    /// The operator's name in EXPLAIN text and messages (`RankIn`).
    fn name(&self) -> &'static str;

    /// Its parameters as EXPLAIN prints them after the name (`field=a output=b`).
    fn explain(&self) -> String;

    /// The input columns it names (of any input): what a source must have for it to apply.
    fn reads(&self) -> Vec<String>;

    /// How many inputs it takes (`None`: one or more).
    fn arity(&self) -> Option<usize> {
        Some(1)
    }

    /// Its output schema from its inputs' schemas (in input order), when known.
    fn output_schema(&self, inputs: &[Option<&Schema>]) -> Option<Schema>;

    /// Whether only the native backend computes it, by design (no SQL engine could): it runs
    /// natively in every engine mode, and [`Self::sql_missing`] says why for every dialect.
    fn native_only(&self) -> bool {
        false
    }

    /// Why the SQL engine of `dialect` cannot compute it, if it cannot: the node then runs
    /// natively, and its SQL is a statement that fails saying this.
    fn sql_missing(&self, _dialect: Dialect) -> Option<String> {
        None
    }

    /// The SELECT computing it from `inputs` (`output`: its own schema when known); called only
    /// for dialects [`Self::sql_missing`] does not refuse.
    fn sql(
        &self,
        _inputs: &[Input<'_>],
        _output: Option<&Schema>,
        _dialect: Dialect,
    ) -> Result<String, String> {
        Err(format!("{} has no SQL form", self.name()))
    }

    /// The native kernel that computes it, in a line for `sql-preview`; otherwise why none does.
    /// The kernel itself is bound by type in the native backend (`native/src/owned/`).
    fn native_kernel(&self) -> Result<String, String> {
        Err("(no native kernel)".to_owned())
    }

    /// Whether it is relational work (attributes, rows and their order, never geometry), which
    /// the SQL engine holding the run's tables runs.
    fn is_relational(&self) -> bool {
        false
    }
}

/// The first input's schema, when known: the rows most operators keep.
pub fn first_schema<'a>(inputs: &[Option<&'a Schema>]) -> Option<&'a Schema> {
    inputs.first().copied().flatten()
}

/// The first input's schema with `columns` set (added, or retyped where they exist): the output
/// of an operator that adds values to its input's rows.
pub fn with_columns(
    inputs: &[Option<&Schema>],
    columns: impl IntoIterator<Item = (String, FieldType)>,
) -> Option<Schema> {
    let mut schema = first_schema(inputs)?.clone();
    for (name, ty) in columns {
        schema.set(&name, ty);
    }
    Some(schema)
}

/// The first input as its SELECT reads it, or the error naming the operator that lacks it.
pub fn first_input<'a>(inputs: &[Input<'a>], name: &str) -> Result<Input<'a>, String> {
    inputs
        .first()
        .copied()
        .ok_or_else(|| format!("{name} needs an input"))
}

/// What lets plans compare and downcast owned operators; implemented for every `PartialEq` type.
pub trait Identity: Any {
    fn as_any(&self) -> &dyn Any;
    /// Whether `other` is an operator of the same type with the same parameters.
    fn same_as(&self, other: &dyn Any) -> bool;
}

impl<T: Any + PartialEq> Identity for T {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn same_as(&self, other: &dyn Any) -> bool {
        other.downcast_ref::<T>().is_some_and(|other| other == self)
    }
}

/// An owned operator in a plan node: shared, compared by type and parameters.
#[derive(Debug, Clone)]
pub struct Owned(Arc<dyn OwnedOperator>);

impl Owned {
    pub fn new(op: impl OwnedOperator) -> Self {
        Self(Arc::new(op))
    }

    /// The operator as its own type, when it is one.
    pub fn downcast<T: OwnedOperator>(&self) -> Option<&T> {
        (*self.0).as_any().downcast_ref::<T>()
    }
}

impl std::ops::Deref for Owned {
    type Target = dyn OwnedOperator;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl PartialEq for Owned {
    fn eq(&self, other: &Self) -> bool {
        (*self.0).same_as((*other.0).as_any())
    }
}

#[cfg(test)]
mod tests {
    //! An operator defined here, outside every shared site, planned through them.

    use super::*;
    use crate::plan::native::{is_relational, native_only, native_support};
    use crate::plan::operator::Operator;
    use crate::plan::schema_infer::output_schema;
    use crate::schema::{Column, FieldType};
    use crate::sql::select::select;

    /// Adds a constant column; DuckDB computes it, PostGIS does not.
    #[derive(Debug, PartialEq)]
    struct Stamp {
        column: String,
    }

    impl OwnedOperator for Stamp {
        fn name(&self) -> &'static str {
            "Stamp"
        }
        fn explain(&self) -> String {
            format!("column={}", self.column)
        }
        fn reads(&self) -> Vec<String> {
            Vec::new()
        }
        fn output_schema(&self, inputs: &[Option<&Schema>]) -> Option<Schema> {
            with_columns(inputs, [(self.column.clone(), FieldType::Integer)])
        }
        fn sql_missing(&self, dialect: Dialect) -> Option<String> {
            (dialect == Dialect::Postgis).then(|| "Stamp runs natively on PostGIS".to_owned())
        }
        fn sql(
            &self,
            inputs: &[Input<'_>],
            _: Option<&Schema>,
            _: Dialect,
        ) -> Result<String, String> {
            Ok(format!(
                "SELECT *, 1 AS {} FROM {}",
                self.column, inputs[0].from
            ))
        }
    }

    #[test]
    fn an_operator_of_its_own_is_planned_through_every_site() {
        let op = Operator::owned(Stamp { column: "s".into() });
        assert_eq!(op.name(), "Stamp");
        assert_eq!(op.arity(), Some(1));
        assert_eq!(op, Operator::owned(Stamp { column: "s".into() }));
        assert_ne!(op, Operator::owned(Stamp { column: "t".into() }));
        let Operator::Owned(owned) = &op else {
            unreachable!()
        };
        assert!(owned.downcast::<Stamp>().is_some());

        let input = Schema {
            columns: vec![Column {
                name: "a".into(),
                ty: FieldType::Text,
            }],
            crs: None,
        };
        let out = output_schema(&op, &[Some(&input)]).unwrap();
        assert_eq!(out.columns.len(), 2);

        let from = [Input {
            from: "t0",
            schema: Some(&input),
        }];
        let duckdb = select(&op, &from, Some(&out), Dialect::Duckdb).unwrap();
        assert_eq!(duckdb, "SELECT *, 1 AS s FROM t0");
        let postgis = select(&op, &from, Some(&out), Dialect::Postgis).unwrap();
        assert!(
            postgis.contains("Stamp runs natively on PostGIS"),
            "{postgis}"
        );

        assert!(!native_only(&op) && !is_relational(&op));
        let declined = native_support(&op).unwrap_err();
        assert_eq!(declined, "Stamp (no native kernel)");
    }
}
