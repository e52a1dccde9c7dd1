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

use crate::schema::Schema;
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

    /// Why the SQL engine of `dialect` cannot compute it, if it cannot: the node then runs
    /// natively. An operator no dialect computes is native-only.
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

    /// Whether no SQL dialect computes it.
    pub fn native_only(&self) -> bool {
        Dialect::ALL.iter().all(|d| self.sql_missing(*d).is_some())
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
