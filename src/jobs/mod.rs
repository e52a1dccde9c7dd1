//! Jobs: documents (stored rules, a rules file, a pipeline) run in the background with retries,
//! a time-out, cancel, and live logs.

pub mod feed;
pub mod in_flight;
pub mod model;
pub mod publish;
pub mod runner;
pub mod submit;
