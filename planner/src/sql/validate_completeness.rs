//! The SELECTs of `completeness_check`: reference features whose key the input lacks and input
//! features whose key the reference lacks, or the parts of reference features no input
//! feature covers.

use super::parts::Input;
use super::quote::{ident, number, string};
use super::validate_context::{Context, ProblemRow};
use crate::plan::validate::Completeness;
use crate::schema::{FieldType, GEOM};

/// A NULL of the type `ty` (read from the reference's `column` when the type is not known).
fn null_of(ty: FieldType, column: &str, reference: Input<'_>) -> String {
    match ty {
        FieldType::Unknown => format!(
            "(SELECT n.{} FROM {} AS n WHERE FALSE LIMIT 1)",
            ident(column),
            reference.from
        ),
        ty => format!("CAST(NULL AS {})", ty.sql()),
    }
}

/// One SELECT per problem kind of `check`.
pub(super) fn completeness_sql(
    ctx: &Context<'_>,
    check: &Completeness,
    reference: Input<'_>,
    related: FieldType,
) -> Result<Vec<String>, String> {
    let ref_key = check.ref_key();
    let r_key = format!("r.{}", ident(ref_key));
    let (t_geom, r_geom) = (ctx.geom_of("t"), format!("r.{}", ident(GEOM)));
    match check {
        Completeness::Keys { as_text, .. } => {
            let same = if *as_text {
                format!("CAST({} AS TEXT) = CAST({r_key} AS TEXT)", ctx.key_of("t"))
            } else {
                format!("{} = {r_key}", ctx.key_of("t"))
            };
            let missing = ProblemRow {
                feature: ctx.null_key(),
                related: r_key.clone(),
                problem: "missing",
                field: None,
                reason: string("no input feature has this reference feature's key"),
                geom: r_geom.clone(),
            }
            .select(&format!(
                "FROM {} AS r WHERE NOT EXISTS (SELECT 1 FROM {} AS t WHERE {same})",
                reference.from, ctx.input.from
            ));
            let unexpected = ProblemRow {
                feature: ctx.key_of("t"),
                related: null_of(related, ref_key, reference),
                problem: "unexpected",
                field: None,
                reason: string("no reference feature has this feature's key"),
                geom: t_geom.clone(),
            }
            .select(&format!(
                "FROM {} AS t WHERE NOT EXISTS (SELECT 1 FROM {} AS r WHERE {same})",
                ctx.input.from, reference.from
            ));
            Ok(vec![missing, unexpected])
        }
        Completeness::Coverage { min_fraction, .. } => {
            let usable =
                |g: &str| format!("{g} IS NOT NULL AND NOT ST_IsEmpty({g}) AND ST_IsValid({g})");
            let cover = format!(
                "(SELECT {}({t_geom}) FROM {} AS t WHERE {} AND ST_Intersects({t_geom}, {r_geom}))",
                ctx.dialect.union_agg(),
                ctx.input.from,
                usable(&t_geom)
            );
            let uncovered = ProblemRow {
                feature: ctx.null_key(),
                related: "u.geomill_ref_key".into(),
                problem: "uncovered",
                field: None,
                reason: string("no input feature covers this part of the reference feature"),
                geom: "u.geomill_part".into(),
            };
            Ok(vec![uncovered.select(&format!(
                "FROM (SELECT {r_key} AS geomill_ref_key, {r_geom} AS geomill_whole, COALESCE(ST_Difference({r_geom}, {cover}), {r_geom}) AS geomill_part FROM {} AS r WHERE {}) AS u WHERE NOT ST_IsEmpty(u.geomill_part) AND ST_Area(u.geomill_part) >= {} * ST_Area(u.geomill_whole)",
                reference.from,
                usable(&r_geom),
                number(*min_fraction)?
            ))])
        }
    }
}
