//! geomill's query compiler: spec model, capability registry, logical plan, optimizer and SQL
//! emitters. Pure: no IO, no database, no async runtime.
