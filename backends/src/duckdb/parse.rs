//! DuckDB's own reading of a console query: the text is handed to DuckDB's parser
//! (`json_serialize_sql`, the query bound as a parameter) and its syntax tree decides. A console
//! query is exactly one SELECT (set operations and CTEs included) whose FROM clauses name plain
//! tables, subqueries, joins or VALUES lists — no table function, no `SHOW`/`DESCRIBE`, no
//! `PIVOT`, no qualified name, no name that reads as a file, URL or glob — and whose functions
//! read no file, setting or environment. The tables it names (its own CTEs aside) are answered
//! for the caller to bind; whatever DuckDB would read differently from another parser is read
//! here as DuckDB runs it.

use std::collections::BTreeSet;

use geomill_planner::sql::guard::{
    ReadOnlyQuery, Refusal, check_read_only, is_forbidden_function, is_system_table,
};
use serde_json::{Map, Value};

use super::EmbeddedEngine;
use super::run::run_error;
use crate::BackendError;

/// The statement asking DuckDB's parser for the syntax tree of the bound text.
const SERIALIZE: &str = "SELECT json_serialize_sql(CAST(? AS VARCHAR))";

/// The kinds of query nodes a console query may hold.
const QUERY_NODES: &[&str] = &["SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE"];

/// The kinds of FROM items a console query may hold (`BASE_TABLE` is checked on its own).
const FROM_ITEMS: &[&str] = &["JOIN", "SUBQUERY", "EXPRESSION_LIST", "EMPTY", "EMPTY_FROM"];

/// Result modifiers and sort orders, harmless in themselves (as are the `*_TYPE_INFO` details
/// of a type named in a cast).
const MODIFIERS: &[&str] = &[
    "ORDER_MODIFIER",
    "LIMIT_MODIFIER",
    "LIMIT_PERCENT_MODIFIER",
    "DISTINCT_MODIFIER",
    "ORDER_DEFAULT",
    "ASCENDING",
    "DESCENDING",
];

/// Whether a table name reads as a file, a URL or a glob to DuckDB's replacement scans.
pub fn looks_like_a_path(name: &str) -> bool {
    name.contains("://")
        || name.starts_with(['/', '~', '.', '\\'])
        || name.contains(['*', '?', '[', '\\'])
        || name.contains(':')
}

impl EmbeddedEngine {
    /// [`check_console_query`] on a connection of its own.
    pub fn check_console_query(
        &self,
        sql: &str,
    ) -> Result<Result<ReadOnlyQuery, Refusal>, BackendError> {
        let connection = self
            .lock()?
            .try_clone()
            .map_err(|e| run_error("connect", &e))?;
        check_console_query(&connection, sql)
    }
}

/// Checks a console query twice: by the SQL guard's parser (a first pass whose refusals name
/// what was refused), then by DuckDB's own ([`read_only_query`]), which decides. Both must find
/// the same tables, or the text reads differently to the engine than to the guard and is
/// refused. The outer `Err` is the engine failing, the inner one the query refused; the tables
/// answered are those the caller must bind, each to a stored table.
pub fn check_console_query(
    connection: &duckdb::Connection,
    sql: &str,
) -> Result<Result<ReadOnlyQuery, Refusal>, BackendError> {
    let first = match check_read_only(sql) {
        Ok(first) => first,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let read = match read_only_query(connection, sql)? {
        Ok(read) => read,
        Err(refusal) => return Ok(Err(refusal)),
    };
    if read.tables != first.tables {
        return Ok(forbidden(format!(
            "the query reads differently to the engine (tables {:?}) than to the guard ({:?}): write it plainly",
            read.tables, first.tables
        )));
    }
    Ok(Ok(read))
}

/// Checks `sql` with DuckDB's parser on `connection`: the outer `Err` is the engine failing,
/// the inner one the query refused.
pub fn read_only_query(
    connection: &duckdb::Connection,
    sql: &str,
) -> Result<Result<ReadOnlyQuery, Refusal>, BackendError> {
    Ok(judge(&syntax_tree(connection, sql)?))
}

/// DuckDB's syntax tree of `sql` (`{"error": false, "statements": [...]}`, or an error object).
fn syntax_tree(connection: &duckdb::Connection, sql: &str) -> Result<Value, BackendError> {
    let tree: String = connection
        .query_row(SERIALIZE, [sql], |row| row.get(0))
        .map_err(|e| run_error(SERIALIZE, &e))?;
    serde_json::from_str(&tree).map_err(|e| BackendError::Query {
        engine: "duckdb",
        reason: format!("DuckDB's syntax tree is not JSON: {e}"),
        sql: SERIALIZE.to_owned(),
    })
}

/// Fails unless DuckDB's parser reads `sql` as exactly one SELECT statement: checked before
/// the engine prepares a text holding a console query (preparing a text of several statements
/// would run all but the last).
pub(crate) fn ensure_one_select(
    connection: &duckdb::Connection,
    sql: &str,
) -> Result<(), BackendError> {
    let tree = syntax_tree(connection, sql)?;
    let single = tree["error"] == Value::Bool(false)
        && tree["statements"].as_array().is_some_and(|s| s.len() == 1);
    if single {
        return Ok(());
    }
    let reason = tree["error_message"]
        .as_str()
        .unwrap_or("not exactly one SELECT statement");
    Err(BackendError::Query {
        engine: "duckdb",
        reason: format!("the query is not one SELECT statement: {reason}"),
        sql: sql.to_owned(),
    })
}

fn forbidden<T>(reason: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal::Forbidden(reason.into()))
}

/// The verdict on the output of `json_serialize_sql`.
fn judge(tree: &Value) -> Result<ReadOnlyQuery, Refusal> {
    if tree["error"] == Value::Bool(true) {
        let message = tree["error_message"].as_str().unwrap_or("unreadable SQL");
        return match tree["error_type"].as_str() {
            Some("parser") => Err(Refusal::Malformed(format!(
                "cannot parse the statement: {message}"
            ))),
            // "Only SELECT statements can be serialized": any other statement.
            _ => forbidden(format!(
                "only read-only queries (SELECT) are allowed ({message})"
            )),
        };
    }
    let statements = tree["statements"].as_array().map_or(&[][..], Vec::as_slice);
    let statement = match statements {
        [statement] => statement,
        [] => return Err(Refusal::Malformed("the query is empty".to_owned())),
        _ => return forbidden("several statements are not allowed: send one query"),
    };
    let mut reader = Reader::default();
    reader.node(&statement["node"], &[])?;
    Ok(ReadOnlyQuery {
        tables: reader.tables,
    })
}

/// Walks a syntax tree, collecting the tables it reads.
#[derive(Default)]
struct Reader {
    tables: BTreeSet<String>,
}

impl Reader {
    /// A query node with the CTE names visible around it.
    fn node(&mut self, node: &Value, ctes: &[String]) -> Result<(), Refusal> {
        let Some(object) = node.as_object() else {
            return forbidden("the query has a part DuckDB did not describe");
        };
        let kind = object.get("type").and_then(Value::as_str).unwrap_or("");
        if !QUERY_NODES.contains(&kind) {
            return forbidden(format!("{kind} is not allowed: send one SELECT"));
        }
        let mut visible = ctes.to_vec();
        // A CTE's body sees the CTEs before it; a recursive CTE also sees itself.
        let entries = object
            .get("cte_map")
            .and_then(|m| m.get("map"))
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        for entry in entries {
            let name = entry["key"].as_str().unwrap_or_default().to_owned();
            if looks_like_a_path(&name) {
                return forbidden(format!("a CTE named {name:?} is not allowed"));
            }
            self.node(&entry["value"]["query"]["node"], &visible)?;
            visible.push(name);
        }
        if let Some(name) = object.get("cte_name").and_then(Value::as_str) {
            visible.push(name.to_owned());
        }
        for (key, value) in object {
            if key != "cte_map" {
                self.value(value, &visible)?;
            }
        }
        Ok(())
    }

    /// Any part of a query node.
    fn value(&mut self, value: &Value, ctes: &[String]) -> Result<(), Refusal> {
        match value {
            Value::Array(items) => items.iter().try_for_each(|item| self.value(item, ctes)),
            Value::Object(object) => self.object(object, ctes),
            _ => Ok(()),
        }
    }

    fn object(&mut self, object: &Map<String, Value>, ctes: &[String]) -> Result<(), Refusal> {
        if let Some(function) = object.get("function_name").and_then(Value::as_str) {
            check_function(object, function)?;
        }
        let kind = object.get("type").and_then(Value::as_str);
        // Expressions carry a `class`; FROM items, query nodes and modifiers do not.
        if let Some(kind) = kind
            && !object.contains_key("class")
        {
            if QUERY_NODES.contains(&kind) {
                return self.node(&Value::Object(object.clone()), ctes);
            }
            if kind == "BASE_TABLE" {
                return self.table(object, ctes);
            }
            if kind == "TABLE_FUNCTION" {
                let name = object
                    .get("function")
                    .and_then(|f| f.get("function_name"))
                    .and_then(Value::as_str)
                    .unwrap_or("?");
                return forbidden(format!("table function {name} is not allowed"));
            }
            let harmless = MODIFIERS.contains(&kind) || kind.ends_with("_TYPE_INFO");
            if !FROM_ITEMS.contains(&kind) && !harmless {
                return forbidden(format!(
                    "{kind} is not allowed in a query: name layers, subqueries or CTEs"
                ));
            }
        }
        object.values().try_for_each(|v| self.value(v, ctes))
    }

    /// A table name: a CTE in sight, or a table the caller must bind.
    fn table(&mut self, object: &Map<String, Value>, ctes: &[String]) -> Result<(), Refusal> {
        let text = |key: &str| object.get(key).and_then(Value::as_str).unwrap_or("");
        let name = text("table_name");
        if !text("schema_name").is_empty() || !text("catalog_name").is_empty() {
            return forbidden(format!(
                "qualified name {}.{name} is not allowed: name a layer alone",
                [text("catalog_name"), text("schema_name")]
                    .into_iter()
                    .filter(|p| !p.is_empty())
                    .collect::<Vec<_>>()
                    .join(".")
            ));
        }
        if object.get("at_clause").is_some_and(|a| !a.is_null()) {
            return forbidden(format!("{name} AT (...) is not allowed"));
        }
        if looks_like_a_path(name) {
            return forbidden(format!(
                "file path {name:?} is not allowed in FROM: name a layer"
            ));
        }
        if ctes.iter().any(|c| c == name) {
            return Ok(());
        }
        if !name.contains('/') && is_system_table(name) {
            return forbidden(format!("{name} names a system catalog, not a layer"));
        }
        self.tables.insert(name.to_owned());
        object
            .iter()
            .filter(|(key, _)| *key == "sample")
            .try_for_each(|(_, v)| self.value(v, ctes))
    }
}

fn check_function(object: &Map<String, Value>, name: &str) -> Result<(), Refusal> {
    let text = |key: &str| object.get(key).and_then(Value::as_str).unwrap_or("");
    if !text("schema").is_empty() || !text("catalog").is_empty() {
        return forbidden(format!("function {}.{name} is not allowed", text("schema")));
    }
    if is_forbidden_function(name) {
        return forbidden(format!("function {} is not allowed", name.to_lowercase()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(sql: &str) -> Result<Vec<String>, Refusal> {
        let connection = duckdb::Connection::open_in_memory().unwrap();
        read_only_query(&connection, sql)
            .unwrap()
            .map(|q| q.tables.into_iter().collect())
    }

    #[test]
    fn queries_name_their_tables_and_ctes_are_not_tables() {
        assert_eq!(
            check("WITH a AS (SELECT * FROM b) SELECT * FROM a JOIN \"w/c\" ON true").unwrap(),
            ["b", "w/c"]
        );
        assert_eq!(
            check(
                "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT * FROM r"
            )
            .unwrap(),
            Vec::<String>::new()
        );
        assert_eq!(
            check("WITH a AS (SELECT * FROM a) SELECT * FROM a").unwrap(),
            ["a"]
        );
        assert_eq!(
            check("SELECT (SELECT max(x) FROM t) FROM (VALUES (1)) v(x) UNION SELECT 2").unwrap(),
            ["t"]
        );
    }

    #[test]
    fn what_duckdb_reads_past_another_parser_is_refused() {
        for sql in [
            "SELECT X'\\' , 1; COPY (SELECT 1) TO '/tmp/x.csv'; SELECT $$ $$",
            "SELECT 1; SELECT 2",
            "SELECT * FROM '/tmp/x.csv'",
            "SELECT * FROM \"/tmp/x.csv\"",
            "SELECT * FROM \"s3://b/x.parquet\"",
            "SELECT * FROM \"data/*.json\"",
            "SELECT * FROM read_csv('/etc/passwd')",
            "SELECT * FROM range(3)",
            "SELECT current_setting('x')",
            "SELECT main.f(1)",
            "SELECT * FROM main.t",
            "SHOW TABLES",
            "DESCRIBE t",
            "COPY t TO 'x.csv'",
            "ATTACH 'x.db' AS x",
            "SELECT * FROM duckdb_settings",
        ] {
            assert!(
                matches!(check(sql), Err(Refusal::Forbidden(_))),
                "{sql}: {:?}",
                check(sql)
            );
        }
        assert!(matches!(check("SELEC 1"), Err(Refusal::Malformed(_))));
        assert!(matches!(check(""), Err(Refusal::Malformed(_))));
    }
}
