//! `classify_by_ring` with the rings taken from a layer (`ring_value_field`): the smallest
//! ring holding each feature, and its rank among the layer's ring values.

use super::LowerContext;
use super::checks::check_new_field;
use super::classify_by_ring::ClassifyByRing;
use crate::error::Problem;
use crate::expr::SqlExpr;
use crate::plan::operator::{
    AggFunc, AggItem, GeoExpr, MapOp, Operator, SpatialAggregateOp, SpatialPredicate, ValueExpr,
};
use crate::plan::ops::rank_in::RankInOp;
use crate::schema::{FieldType, GEOM};
use crate::sql::quote::{ident, number};

/// The feature's own geometry, kept aside while its centroid is tested.
const SHAPE: &str = "__geomill_shape";

/// The operators of the layer form (see [`ClassifyByRing`]).
pub fn lower(
    params: &ClassifyByRing,
    values: &str,
    ctx: &LowerContext<'_>,
) -> Result<Vec<Operator>, Vec<Problem>> {
    let mut problems = Vec::new();
    if !params.rings.is_empty() {
        problems.push(Problem::new(
            ctx.at("rings"),
            "give either rings (distances) or ring_value_field (rings from the layer), not both",
        ));
    }
    problems.extend(check_new_field(&params.ring_field, ctx, "ring_field"));
    problems.extend(check_new_field(&params.value_field, ctx, "value_field"));
    if params.ring_field == params.value_field {
        problems.push(Problem::new(
            ctx.at("value_field"),
            "must differ from ring_field",
        ));
    }
    if let Some(Some(reference)) = ctx.others.first()
        && !reference.has(values)
    {
        problems.push(Problem::new(
            ctx.at("ring_value_field"),
            format!("the reference layer has no field {values:?}"),
        ));
    }
    let outside = match params.outside_value.map(number).transpose() {
        Ok(outside) => outside,
        Err(message) => {
            problems.push(Problem::new(ctx.at("outside_value"), message));
            None
        }
    };
    if !problems.is_empty() {
        return Err(problems);
    }
    let expr = |text: &str| {
        SqlExpr::parse(text)
            .map(ValueExpr::Sql)
            .map_err(|m| vec![Problem::new(ctx.at("ring_value_field"), m)])
    };
    let mut operators = Vec::new();
    if params.use_centroid {
        operators.push(Operator::Map(MapOp {
            set: vec![
                (SHAPE.to_owned(), expr(GEOM)?, FieldType::Geometry),
                (
                    GEOM.to_owned(),
                    ValueExpr::Geo(GeoExpr::Centroid),
                    FieldType::Geometry,
                ),
            ],
            ..MapOp::default()
        }));
    }
    operators.push(Operator::SpatialAggregate(SpatialAggregateOp {
        // P(ring, feature): a ring holding the centroid, or meeting the feature.
        predicate: if params.use_centroid {
            SpatialPredicate::Contains
        } else {
            SpatialPredicate::Intersects
        },
        distance: None,
        aggregates: vec![AggItem {
            output: params.value_field.clone(),
            func: AggFunc::Min,
            column: Some(values.to_owned()),
        }],
    }));
    let value = ident(&params.value_field);
    let mut set = Vec::new();
    if params.use_centroid {
        set.push((GEOM.to_owned(), expr(&ident(SHAPE))?, FieldType::Geometry));
    }
    let filled = match outside {
        Some(outside) => format!("coalesce({value}, {outside})"),
        None => value,
    };
    set.push((
        params.value_field.clone(),
        expr(&format!("CAST({filled} AS DOUBLE PRECISION)"))?,
        FieldType::Double,
    ));
    operators.push(Operator::Map(MapOp {
        set,
        ..MapOp::default()
    }));
    if params.use_centroid {
        operators.push(Operator::Map(MapOp {
            drop: vec![SHAPE.to_owned()],
            ..MapOp::default()
        }));
    }
    operators.push(Operator::owned(RankInOp {
        field: params.value_field.clone(),
        values: values.to_owned(),
        output: params.ring_field.clone(),
    }));
    Ok(operators)
}
