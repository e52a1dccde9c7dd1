//! The expression language's parsing, printing and refusals.

use super::*;

#[test]
fn columns_are_quoted_and_collected() {
    let expr = SqlExpr::parse("pop_est > 1000000 AND continent = 'Africa'").unwrap();
    assert_eq!(
        expr.to_sql(),
        "\"pop_est\" > 1000000 AND \"continent\" = 'Africa'"
    );
    assert_eq!(
        expr.columns().into_iter().collect::<Vec<_>>(),
        ["continent", "pop_est"]
    );
}

#[test]
fn injection_attempts_are_refused() {
    for text in [
        "1 = 1; DROP TABLE countries",
        "1 = 1) UNION SELECT * FROM read_csv('/etc/passwd') --",
        "name IN (SELECT name FROM secrets)",
        "read_text('/etc/passwd') IS NOT NULL",
        "t.name = 'x'",
        "row_number() OVER () > 1",
        "",
    ] {
        assert!(SqlExpr::parse(text).is_err(), "{text} was accepted");
    }
}

#[test]
fn prefixed_literals_are_refused_whatever_they_hold() {
    for literal in [
        "N'x'", "X'00'", "B'01'", "E'x'", "U&'x'", "$$x$$", "$t$x$t$",
    ] {
        for text in [
            format!("name = {literal}"),
            format!("name = {literal} OR '''' = ''''"),
            format!("concat(name, {literal}) IS NULL"),
        ] {
            if let Ok(expr) = SqlExpr::parse(&text) {
                panic!("{text} was accepted as {}", expr.to_sql());
            }
        }
    }
    let attack = "name = N'x'' = (SELECT content FROM read_text(''/etc/passwd'')) OR '''' = '''";
    let refusal = SqlExpr::parse(attack).unwrap_err();
    assert!(refusal.contains("N'…'"), "{refusal}");
}

#[test]
fn string_literals_are_printed_by_the_planner() {
    for (text, sql) in [
        ("name = 'it''s'", r#""name" = 'it''s'"#),
        (
            "name = 'x''; COPY (SELECT 1) TO ''/tmp/f.csv''; SELECT '''",
            r#""name" = 'x''; COPY (SELECT 1) TO ''/tmp/f.csv''; SELECT '''"#,
        ),
        (r"name = 'a\'", r#""name" = 'a\'"#),
        (r#""a""b" > 1"#, r#""a""b" > 1"#),
    ] {
        assert_eq!(SqlExpr::parse(text).unwrap().to_sql(), sql, "{text}");
    }
}

#[test]
fn two_minus_signs_never_start_a_comment() {
    let expr = SqlExpr::parse("- -1 + length('\n1) IS NULL; SELECT 1') > 0").unwrap();
    let sql = expr.to_sql();
    assert!(!sql.contains("--"), "{sql}");
    assert_eq!(sql, "-(-1) + length('\n1) IS NULL; SELECT 1') > 0");
    let folded = SqlExpr::parse("- (0 - 2) > 0").unwrap().folded().to_sql();
    assert!(!folded.contains("--"), "{folded}");
}

#[test]
fn a_double_cast_is_printed_as_both_engines_read_it() {
    let sql = SqlExpr::parse("CAST(a AS DOUBLE) + a::double")
        .unwrap()
        .to_sql();
    assert_eq!(
        sql,
        r#"CAST("a" AS DOUBLE PRECISION) + "a"::DOUBLE PRECISION"#
    );
}

#[test]
fn every_printed_expression_parses_back_to_itself() {
    for text in [
        "CASE WHEN a > 1 THEN 'x' WHEN a IS NULL THEN NULL ELSE 'y' END",
        "CAST(a AS DOUBLE PRECISION) BETWEEN 1 AND 2.5e3",
        r"a NOT IN (1, 2, 3) AND b LIKE 'x%' ESCAPE '\'",
        "a::INTEGER % 2 = 0 OR NOT b IS DISTINCT FROM c",
        "floor(a) + ceil(b) - abs(-c) / substring(d, 1, 2)::INT",
        "TRIM(name) || 'x' IS NOT NULL",
    ] {
        let printed = SqlExpr::parse(text).unwrap().to_sql();
        let again = SqlExpr::parse(&printed).unwrap().to_sql();
        assert_eq!(printed, again, "{text}");
    }
}

#[test]
fn constructs_outside_the_printer_are_refused() {
    for text in [
        r#"a COLLATE "C" = 'x'"#,
        "EXTRACT(year FROM d) > 2000",
        "a SIMILAR TO 'x'",
        "CAST(a AS foo('x'))",
        "a ~ 'x'",
        "(1, 2) = (1, 2)",
        "a LIKE ANY ('x')",
    ] {
        assert!(SqlExpr::parse(text).is_err(), "{text} was accepted");
    }
}

#[test]
fn bbox_filters_are_recognised_and_built() {
    let expr = SqlExpr::parse("ST_Intersects(geom, ST_MakeEnvelope(-10, 35.5, 30, 70))").unwrap();
    assert_eq!(expr.as_bbox_filter(), Some([-10.0, 35.5, 30.0, 70.0]));
    let swapped = SqlExpr::parse("st_intersects(ST_MakeEnvelope(0, 0, 1, 1), geom)").unwrap();
    assert_eq!(swapped.as_bbox_filter(), Some([0.0, 0.0, 1.0, 1.0]));
    assert_eq!(
        SqlExpr::parse("ST_Intersects(geom, geom)")
            .unwrap()
            .as_bbox_filter(),
        None
    );
    let built = SqlExpr::bbox_filter([-1.5, 2.0, 3.0, 4.0]).unwrap();
    assert_eq!(
        built.to_sql(),
        "ST_Intersects(\"geom\", ST_MakeEnvelope(-1.5, 2, 3, 4))"
    );
}

#[test]
fn constants_fold() {
    let folded = SqlExpr::parse("pop_est > 2 * 500 AND 1 = 1")
        .unwrap()
        .folded();
    assert_eq!(folded.to_sql(), "\"pop_est\" > 1000");
    assert_eq!(
        SqlExpr::parse("'full' = 'full' OR x > 1")
            .unwrap()
            .folded()
            .as_bool(),
        Some(true)
    );
    assert_eq!(
        SqlExpr::parse("NOT (1 > 2)").unwrap().folded().as_bool(),
        Some(true)
    );
    assert_eq!(
        SqlExpr::parse("x - 3 > -1 - 1").unwrap().folded().to_sql(),
        "\"x\" - 3 > -2"
    );
}
