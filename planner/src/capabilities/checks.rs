//! Checks and conversions shared by capability lowerings: expressions against the input schema,
//! column names, distance and area units.

use schemars::JsonSchema;
use serde::Deserialize;

use super::LowerContext;
use crate::error::Problem;
use crate::expr::SqlExpr;
use crate::schema::{CrsUnits, GEOM, Schema, crs_units};

/// Parses an expression parameter and checks its columns against the input schema when known.
pub fn parse_expr(
    text: &str,
    ctx: &LowerContext<'_>,
    param: &str,
) -> Result<SqlExpr, Vec<Problem>> {
    let expr = SqlExpr::parse(text).map_err(|m| vec![Problem::new(ctx.at(param), m)])?;
    if let Some(schema) = ctx.input {
        let unknown = expr.unknown_columns(schema);
        if !unknown.is_empty() {
            return Err(vec![unknown_columns_problem(
                ctx.at(param),
                &unknown,
                schema,
            )]);
        }
    }
    Ok(expr)
}

/// Checks that `schema` (when known) has every column in `names`.
pub fn require_columns(
    schema: Option<&Schema>,
    names: &[String],
    path: String,
) -> Result<(), Vec<Problem>> {
    let Some(schema) = schema else { return Ok(()) };
    let unknown: Vec<String> = names.iter().filter(|n| !schema.has(n)).cloned().collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(vec![unknown_columns_problem(path, &unknown, schema)])
    }
}

fn unknown_columns_problem(path: String, unknown: &[String], schema: &Schema) -> Problem {
    Problem::new(
        path,
        format!(
            "unknown column(s) {} (available: {})",
            unknown.join(", "),
            schema.names().join(", ")
        ),
    )
}

/// Problems with a field the step adds: a name that cannot be used or that the input has.
pub fn check_new_field(name: &str, ctx: &LowerContext<'_>, param: &str) -> Vec<Problem> {
    if name == GEOM || name.trim().is_empty() {
        vec![Problem::new(
            ctx.at(param),
            "cannot be used as a field name",
        )]
    } else if ctx.input.is_some_and(|s| s.has(name)) {
        vec![Problem::new(
            ctx.at(param),
            format!("field {name} already exists in the input"),
        )]
    } else {
        Vec::new()
    }
}

/// A distance unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DistanceUnit {
    #[default]
    Meters,
    Kilometers,
    Feet,
    Miles,
    /// Degrees of longitude/latitude: only for geographic data.
    Degrees,
    /// The units of the data's CRS, whatever they are.
    Crs,
}

/// A distance resolved against the input's CRS.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResolvedDistance {
    /// In CRS units, or in metres when `geodesic`.
    pub value: f64,
    /// Metres on lon/lat data: to be computed in a local metric projection.
    pub geodesic: bool,
}

/// Whether distances on the main input are measured as great circles: on geographic data, and
/// (as metric distances are) on data whose CRS is not known, taken as lon/lat.
pub fn measures_geodesic(ctx: &LowerContext<'_>) -> bool {
    ctx.crs()
        .is_none_or(|crs| crs_units(crs) == Some(CrsUnits::Degrees))
}

/// Turns `distance unit` into what the operators take. Metric units on geographic data (or on
/// data whose CRS is not known, taken as lon/lat) are geodesic; on projected data they are
/// converted to the CRS's units.
pub fn resolve_distance(
    distance: f64,
    unit: DistanceUnit,
    ctx: &LowerContext<'_>,
    param: &str,
) -> Result<ResolvedDistance, Vec<Problem>> {
    let metres = match unit {
        DistanceUnit::Meters => distance,
        DistanceUnit::Kilometers => distance * 1000.0,
        DistanceUnit::Feet => distance * 0.3048,
        DistanceUnit::Miles => distance * 1609.344,
        DistanceUnit::Crs => {
            return Ok(ResolvedDistance {
                value: distance,
                geodesic: false,
            });
        }
        DistanceUnit::Degrees => {
            if let Some(CrsUnits::Linear { .. }) = ctx.crs().and_then(crs_units) {
                return Err(vec![Problem::new(
                    ctx.at(param),
                    format!(
                        "unit degrees needs geographic data, but the input is in {}",
                        ctx.crs().unwrap_or_default()
                    ),
                )]);
            }
            return Ok(ResolvedDistance {
                value: distance,
                geodesic: false,
            });
        }
    };
    match ctx.crs().map(|crs| (crs, crs_units(crs))) {
        Some((_, Some(CrsUnits::Linear { metres_per_unit }))) => Ok(ResolvedDistance {
            value: metres / metres_per_unit,
            geodesic: false,
        }),
        Some((crs, None)) => Err(vec![Problem::new(
            ctx.at(param),
            format!(
                "the units of {crs} are not known to geomill: give the distance with unit \"crs\""
            ),
        )]),
        Some((_, Some(CrsUnits::Degrees))) | None => Ok(ResolvedDistance {
            value: metres,
            geodesic: true,
        }),
    }
}
