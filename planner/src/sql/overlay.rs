//! The SQL of the geometric overlays (`Operator::Overlay`): clip, erase, pairwise
//! intersection, symmetric difference and union.

use super::dialect::Dialect;
use super::parts::{Input, NEEDS_COLUMNS, geom, joined_list, projection, projection_with_geom};
use super::quote::ident;
use crate::plan::operator::{MapOp, OverlayMode};
use crate::plan::schema_infer::joined_columns;
use crate::schema::{GEOM, Schema};

pub(super) fn overlay_sql(
    mode: OverlayMode,
    columns: &[String],
    keep_geom_type: bool,
    main: Input<'_>,
    other: Input<'_>,
    dialect: Dialect,
) -> Result<String, String> {
    let (t, r, union) = (geom("t"), geom("r"), dialect.union_agg());
    match mode {
        OverlayMode::Clip => {
            let list = projection_with_geom(
                "t.",
                main.schema,
                &format!("ST_Intersection({t}, m.{})", ident(GEOM)),
                dialect,
                &[],
            )?;
            Ok(format!(
                "SELECT {list} FROM {} AS t, (SELECT {union}(r.{g}) AS {g} FROM {} AS r) AS m WHERE ST_Intersects({t}, m.{g})",
                main.from,
                other.from,
                g = ident(GEOM)
            ))
        }
        OverlayMode::Erase => {
            let cut = format!(
                "COALESCE(ST_Difference({t}, (SELECT {union}(r.{g}) FROM {} AS r WHERE ST_Intersects({t}, {r}))), {t})",
                other.from,
                g = ident(GEOM)
            );
            let list = projection_with_geom("t.", main.schema, &cut, dialect, &[])?;
            Ok(format!(
                "SELECT * FROM (SELECT {list} FROM {} AS t) AS e WHERE NOT ST_IsEmpty(e.{})",
                main.from,
                ident(GEOM)
            ))
        }
        OverlayMode::DifferenceWithUnion => {
            let xor = format!(
                "CASE WHEN {t} IS NULL OR ST_IsEmpty({t}) THEN {t} ELSE COALESCE(ST_SymDifference({t}, m.{g}), {t}) END",
                g = ident(GEOM)
            );
            let list = projection_with_geom("t.", main.schema, &xor, dialect, &[])?;
            Ok(format!(
                "SELECT {list} FROM {} AS t, (SELECT {union}(r.{g}) AS {g} FROM {} AS r) AS m",
                main.from,
                other.from,
                g = ident(GEOM)
            ))
        }
        OverlayMode::Intersection => {
            intersection_sql(columns, keep_geom_type, main, other, dialect)
        }
        OverlayMode::SymmetricDifference => symmetric_difference_sql(columns, main, other, dialect),
        OverlayMode::Union => Ok(format!(
            "{} UNION ALL {}",
            intersection_sql(columns, keep_geom_type, main, other, dialect)?,
            symmetric_difference_sql(columns, main, other, dialect)?
        )),
    }
}

/// Pairwise intersections: the first input's attributes (none when it has only a geometry),
/// the second's requested ones, then the intersection.
fn intersection_sql(
    columns: &[String],
    keep_geom_type: bool,
    main: Input<'_>,
    other: Input<'_>,
    dialect: Dialect,
) -> Result<String, String> {
    let (t, r) = (geom("t"), geom("r"));
    let geometry_only = main
        .schema
        .is_some_and(|s| s.columns.iter().all(|c| c.name == GEOM));
    let mut list = if geometry_only {
        String::new()
    } else {
        projection(
            "t.",
            main.schema,
            &MapOp {
                drop: vec![GEOM.to_owned()],
                ..MapOp::default()
            },
            dialect,
        )?
    };
    list.push_str(&joined_list(main.schema, other, columns, dialect)?);
    let piece = format!("ST_Intersection({t}, {r})");
    let piece = if keep_geom_type {
        // A lower-dimension piece is dropped (NULL); a collection keeps its parts of the
        // input's dimension.
        format!(
            "CASE WHEN ST_Dimension({piece}) < ST_Dimension({t}) THEN NULL ELSE ST_CollectionExtract({piece}, ST_Dimension({t}) + 1) END"
        )
    } else {
        piece
    };
    list.push_str(&format!(", {piece} AS {}", ident(GEOM)));
    let list = list.trim_start_matches(", ");
    Ok(format!(
        "SELECT * FROM (SELECT {list} FROM {} AS t JOIN {} AS r ON ST_Intersects({t}, {r})) AS o WHERE o.{g} IS NOT NULL AND NOT ST_IsEmpty(o.{g})",
        main.from,
        other.from,
        g = ident(GEOM)
    ))
}

/// Each input's features erased by the union of the other input's features they meet, with
/// their own attributes and NULL for the other input's; the columns as for intersections.
fn symmetric_difference_sql(
    columns: &[String],
    main: Input<'_>,
    other: Input<'_>,
    dialect: Dialect,
) -> Result<String, String> {
    let (Some(left), Some(right)) = (main.schema, other.schema) else {
        return Err(NEEDS_COLUMNS.into());
    };
    let joined = joined_columns(Some(left), Some(right), columns).unwrap_or_default();
    let typed = |schema: &Schema, name: &str| {
        schema
            .columns
            .iter()
            .find(|c| c.name == name)
            .map_or(crate::schema::FieldType::Unknown, |c| c.ty)
            .sql()
    };
    let null = |schema: &Schema, name: &str, output: &str| {
        format!("CAST(NULL AS {}) AS {}", typed(schema, name), ident(output))
    };
    let attributes: Vec<&str> = left.names().into_iter().filter(|n| *n != GEOM).collect();
    let erased = |of: &str, by: &str| {
        format!(
            "COALESCE(ST_Difference({of}, (SELECT {}(b.{g}) FROM {by} AS b WHERE ST_Intersects({of}, b.{g}))), {of})",
            dialect.union_agg(),
            g = ident(GEOM)
        )
    };
    let mut first: Vec<String> = attributes
        .iter()
        .map(|n| format!("t.{}", ident(n)))
        .collect();
    first.extend(
        joined
            .iter()
            .map(|(name, output)| null(right, name, output)),
    );
    first.push(format!(
        "{} AS {}",
        erased(&geom("t"), other.from),
        ident(GEOM)
    ));
    let mut second: Vec<String> = attributes.iter().map(|n| null(left, n, n)).collect();
    second.extend(
        joined
            .iter()
            .map(|(name, output)| format!("t.{} AS {}", ident(name), ident(output))),
    );
    second.push(format!(
        "{} AS {}",
        erased(&geom("t"), main.from),
        ident(GEOM)
    ));
    Ok(format!(
        "SELECT * FROM (SELECT {} FROM {} AS t UNION ALL SELECT {} FROM {} AS t) AS o WHERE NOT ST_IsEmpty(o.{g})",
        first.join(", "),
        main.from,
        second.join(", "),
        other.from,
        g = ident(GEOM)
    ))
}
