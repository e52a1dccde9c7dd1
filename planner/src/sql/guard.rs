//! The guard of the SQL endpoints: a statement is accepted only if it is one read-only query
//! over plain table names. Anything else — several statements, DDL/DML, `ATTACH`, `COPY`,
//! `INSTALL`, `LOAD`, `PRAGMA`, `SET`, table functions that read files or URLs (`read_csv`,
//! `ST_Read`, ...), file or environment functions anywhere, qualified names — is refused.

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use sqlparser::ast::{Expr, ObjectName, Query, Statement, TableFactor, Visit, Visitor};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;

/// Function name prefixes and names that read files, reach the network or the environment.
const FORBIDDEN_FUNCTIONS: &[&str] = &[
    "read_",
    "st_read",
    "parquet_",
    "glob",
    "getenv",
    "sniff_csv",
    "json_execute",
    "query",
    "query_table",
    "duckdb_",
    "pragma_",
    "iceberg_",
    "delta_",
    "sqlite_",
    "postgres_",
    "mysql_",
    "http",
    "load",
];

/// A checked query: the table names it reads (its own CTE names excluded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOnlyQuery {
    pub tables: BTreeSet<String>,
}

struct Inspector {
    tables: BTreeSet<String>,
    ctes: BTreeSet<String>,
    problem: Option<String>,
}

fn name_of(name: &ObjectName) -> Result<String, String> {
    match name.0.as_slice() {
        // DuckDB reads a file for `FROM 'path'`.
        [part] if part.as_ident().is_some_and(|i| i.quote_style == Some('\'')) => Err(format!(
            "file path {name} is not allowed in FROM: name a layer"
        )),
        [part] => Ok(part
            .as_ident()
            .map(|i| i.value.clone())
            .unwrap_or_else(|| part.to_string())),
        _ => Err(format!(
            "qualified name {name} is not allowed: name a layer alone"
        )),
    }
}

impl Visitor for Inspector {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        if let Some(with) = &query.with {
            for cte in &with.cte_tables {
                self.ctes.insert(cte.alias.name.value.clone());
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        let problem = match factor {
            TableFactor::Table {
                name,
                args: Some(_),
                ..
            } => Some(format!("table function {name} is not allowed")),
            TableFactor::Table { name, .. } => match name_of(name) {
                Ok(table) => {
                    if !self.ctes.contains(&table) {
                        self.tables.insert(table);
                    }
                    None
                }
                Err(problem) => Some(problem),
            },
            TableFactor::Derived { .. } | TableFactor::NestedJoin { .. } => None,
            other => Some(format!(
                "{other} is not allowed in FROM: name layers, subqueries or CTEs"
            )),
        };
        match problem {
            Some(problem) => {
                self.problem = Some(problem);
                ControlFlow::Break(())
            }
            None => ControlFlow::Continue(()),
        }
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        if let Expr::Function(function) = expr {
            let name = function.name.to_string().to_lowercase().replace('"', "");
            let base = name.rsplit('.').next().unwrap_or(&name);
            if name.contains('.') || FORBIDDEN_FUNCTIONS.iter().any(|f| base.starts_with(f)) {
                self.problem = Some(format!("function {name} is not allowed"));
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }
}

/// Checks `sql`; the error says what was refused.
pub fn check_read_only(sql: &str) -> Result<ReadOnlyQuery, String> {
    let statements = Parser::parse_sql(&DuckDbDialect {}, sql)
        .map_err(|e| format!("cannot parse the statement: {e}"))?;
    let [statement] = statements.as_slice() else {
        return Err(format!(
            "expected exactly one statement, got {}",
            statements.len()
        ));
    };
    let Statement::Query(query) = statement else {
        let kind = statement.to_string();
        let kind = kind
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_uppercase();
        return Err(format!(
            "only read-only queries (SELECT) are allowed, not {kind}"
        ));
    };
    let mut inspector = Inspector {
        tables: BTreeSet::new(),
        ctes: BTreeSet::new(),
        problem: None,
    };
    let _ = query.visit(&mut inspector);
    match inspector.problem {
        Some(problem) => Err(problem),
        None => Ok(ReadOnlyQuery {
            tables: inspector.tables,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_queries_pass_and_name_their_tables() {
        let q = check_read_only("WITH big AS (SELECT * FROM countries WHERE pop_est > 1) SELECT b.name, count(*) FROM big b JOIN \"cities\" c ON ST_Within(c.geom, b.geom) GROUP BY 1").unwrap();
        assert_eq!(
            q.tables.into_iter().collect::<Vec<_>>(),
            ["cities", "countries"]
        );
        assert!(check_read_only("SELECT 1 + 1").unwrap().tables.is_empty());
    }

    #[test]
    fn everything_else_is_refused() {
        for sql in [
            "SELECT * FROM read_csv('/etc/passwd')",
            "SELECT * FROM ST_Read('/etc/passwd')",
            "SELECT * FROM 'https://example.com/x.parquet'",
            "SELECT read_text('/etc/passwd')",
            "SELECT getenv('HOME')",
            "SELECT * FROM meta.datasets",
            "SELECT * FROM countries; DROP TABLE countries",
            "DROP TABLE countries",
            "ATTACH 'x.db'",
            "COPY countries TO '/tmp/x.csv'",
            "INSTALL httpfs",
            "LOAD httpfs",
            "PRAGMA database_list",
            "SET threads = 1",
            "CREATE TABLE x AS SELECT 1",
            "INSERT INTO countries VALUES (1)",
            "SELECT * FROM glob('/etc/*')",
            "SELECT * FROM duckdb_settings()",
            "SELECT * FROM (SELECT * FROM read_parquet('x')) t",
        ] {
            assert!(check_read_only(sql).is_err(), "{sql} was accepted");
        }
    }
}
