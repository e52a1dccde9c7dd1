//! Output schemas: what each operator produces from its inputs' schemas (`None` when an input's
//! columns are not known). Shared by lowering, the optimizer's checks and the SQL emitters.

use super::operator::{
    AggFunc, AggItem, GeoExpr, MapOp, NearestOp, Operator, OverlayMode, RefColumns, ValueExpr,
};
use crate::schema::{Column, FieldType, GEOM, Schema};

/// Prefix given to a joined column whose name the left input already has.
pub const CLASH_PREFIX: &str = "ref_";

/// The columns a join brings from its right input, as (right name, output name): the
/// requested ones, or every right attribute; a name already taken gets [`CLASH_PREFIX`] (again,
/// until it is free).
/// `None` when nothing was requested and the right columns are not known.
pub fn joined_columns(
    left: Option<&Schema>,
    right: Option<&Schema>,
    requested: &[String],
) -> Option<Vec<(String, String)>> {
    let names: Vec<String> = if requested.is_empty() {
        right?.attributes().map(|c| c.name.clone()).collect()
    } else {
        requested.to_vec()
    };
    let mut taken: Vec<String> = left
        .map(|l| l.names().into_iter().map(str::to_owned).collect())
        .unwrap_or_default();
    let mut columns = Vec::new();
    for name in names {
        let mut output = name.clone();
        while taken.contains(&output) {
            output = format!("{CLASH_PREFIX}{output}");
        }
        taken.push(output.clone());
        columns.push((name, output));
    }
    Some(columns)
}

/// The columns a nearest search brings from its right input, as [`joined_columns`] names them
/// (none for an empty [`RefColumns::Only`]).
pub fn brought_columns(
    left: Option<&Schema>,
    right: Option<&Schema>,
    columns: &RefColumns,
) -> Option<Vec<(String, String)>> {
    match columns {
        RefColumns::Only(named) if named.is_empty() => Some(Vec::new()),
        _ => joined_columns(left, right, columns.named()),
    }
}

/// The columns a nearest search brings, named after the left input's columns and the search's
/// own fields (the distance, the fraction), so that a clashing name is prefixed.
pub fn nearest_columns(
    left: Option<&Schema>,
    right: Option<&Schema>,
    nearest: &NearestOp,
) -> Option<Vec<(String, String)>> {
    let taken = left.map(|left| {
        let mut taken = left.clone();
        taken.set(&nearest.distance_field, FieldType::Double);
        for (field, ty) in nearest.locate.iter().flat_map(|l| l.fields()) {
            taken.set(field, ty);
        }
        taken
    });
    brought_columns(taken.as_ref(), right, &nearest.columns)
}

fn type_of(schema: Option<&Schema>, name: &str) -> FieldType {
    schema
        .and_then(|s| s.columns.iter().find(|c| c.name == name))
        .map_or(FieldType::Unknown, |c| c.ty)
}

/// The type an aggregate produces.
pub fn aggregate_type(item: &AggItem, input: Option<&Schema>) -> FieldType {
    match item.func {
        AggFunc::Count => FieldType::Integer,
        AggFunc::Avg | AggFunc::Mean => FieldType::Double,
        AggFunc::Sum | AggFunc::Min | AggFunc::Max | AggFunc::First => item
            .column
            .as_deref()
            .map_or(FieldType::Unknown, |c| type_of(input, c)),
    }
}

fn apply_map(map: &MapOp, input: &Schema) -> Schema {
    let mut schema = input.clone();
    for name in &map.drop {
        schema.remove(name);
    }
    for (from, to) in &map.rename {
        if let Some(column) = schema.columns.iter_mut().find(|c| &c.name == from) {
            column.name.clone_from(to);
        }
    }
    for (name, value, ty) in &map.set {
        let ty = match (value, ty) {
            (ValueExpr::Cast { to, .. }, _) => *to,
            (_, ty) => *ty,
        };
        schema.set(name, ty);
        if let ValueExpr::Geo(GeoExpr::Transform { to: crs, .. } | GeoExpr::SetCrs { crs }) = value
        {
            schema.crs = Some(crs.clone());
        }
    }
    schema
}

fn with_joined(left: &Schema, right: Option<&Schema>, requested: &[String]) -> Option<Schema> {
    let mut schema = left.clone();
    for (right_name, output) in joined_columns(Some(left), right, requested)? {
        schema.set(&output, type_of(right, &right_name));
    }
    Some(schema)
}

/// The output schema of `op` given its inputs' schemas (in input order).
pub fn output_schema(op: &Operator, inputs: &[Option<&Schema>]) -> Option<Schema> {
    let main = inputs.first().copied().flatten();
    let other = inputs.get(1).copied().flatten();
    match op {
        // A scan's schema comes from the catalog; pruning keeps the listed columns.
        Operator::Scan { .. } => None,
        Operator::Filter { .. }
        | Operator::Sort { .. }
        | Operator::Distinct { .. }
        | Operator::Sample { .. }
        | Operator::SpatialFilter(_)
        | Operator::Export(_) => main.cloned(),
        Operator::Overlay(overlay) => match overlay.mode {
            OverlayMode::Clip | OverlayMode::Erase | OverlayMode::DifferenceWithUnion => {
                main.cloned()
            }
            OverlayMode::Intersection | OverlayMode::SymmetricDifference | OverlayMode::Union => {
                with_joined(main?, other, &overlay.columns)
            }
        },
        Operator::Map(map) => main.map(|schema| apply_map(map, schema)),
        Operator::Project { columns } => {
            let input = main?;
            Some(Schema {
                columns: columns
                    .iter()
                    .map(|name| Column {
                        name: name.clone(),
                        ty: type_of(Some(input), name),
                    })
                    .collect(),
                crs: input.crs.clone(),
            })
        }
        Operator::Join(join) => {
            let mut schema = main?.clone();
            for (right_name, output) in join.brought(Some(&schema), other)? {
                schema.set(&output, type_of(other, &right_name));
            }
            Some(schema)
        }
        Operator::Reshape(reshape) => reshape.output_schema(main?),
        Operator::Network(n) => n.output_schema(inputs),
        Operator::Owned(o) => o.output_schema(inputs),
        Operator::Validate(v) => Some(v.output_schema(main, other)),
        Operator::Aggregate(aggregate) => {
            let input = main?;
            let mut columns: Vec<Column> = aggregate
                .group_by
                .iter()
                .map(|name| Column {
                    name: name.clone(),
                    ty: type_of(Some(input), name),
                })
                .collect();
            for item in &aggregate.aggregates {
                columns.push(Column {
                    name: item.output.clone(),
                    ty: aggregate_type(item, Some(input)),
                });
            }
            if aggregate.geometry.is_some() {
                columns.push(Column {
                    name: GEOM.to_owned(),
                    ty: FieldType::Geometry,
                });
            }
            Some(Schema {
                columns,
                crs: input.crs.clone(),
            })
        }
        Operator::SpatialJoin(join) => with_joined(main?, other, &join.columns),
        Operator::SpatialAggregate(aggregate) => {
            let mut schema = main?.clone();
            for item in &aggregate.aggregates {
                schema.set(&item.output, aggregate_type(item, other));
            }
            Some(schema)
        }
        Operator::Nearest(nearest) => {
            let left = main?;
            let mut schema = left.clone();
            schema.set(&nearest.distance_field, FieldType::Double);
            for (right_name, output) in nearest_columns(Some(left), other, nearest)? {
                schema.set(&output, type_of(other, &right_name));
            }
            for (field, ty) in nearest.locate.iter().flat_map(|l| l.fields()) {
                schema.set(field, ty);
            }
            Some(schema)
        }
        Operator::Concat => {
            let mut schema = main?.clone();
            for input in inputs.iter().skip(1) {
                for column in &(*input)?.columns {
                    if !schema.has(&column.name) {
                        schema.columns.push(column.clone());
                    }
                }
            }
            Some(schema)
        }
    }
}
