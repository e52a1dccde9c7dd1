//! An operator's input as its SELECT reads it: what to put after FROM, and its columns.

use crate::schema::Schema;

/// An input as a SELECT sees it: what to put after FROM, and its columns when known.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub from: &'a str,
    pub schema: Option<&'a Schema>,
}
