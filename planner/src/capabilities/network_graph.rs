//! The parameters every network analysis shares (how the line layer becomes a graph) and the
//! checks of the point layers it routes between.

use schemars::JsonSchema;
use serde::Deserialize;

use super::LowerContext;
use super::checks::require_columns;
use crate::error::Problem;
use crate::plan::operator::{GraphSpec, NetworkAnalysis, NetworkOp, Operator};
use crate::schema::{CrsUnits, FieldType, crs_units};

/// How the step's input (a line layer) becomes a graph.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct GraphParams {
    /// The numeric field giving each line's cost (default: its length in metres, on the
    /// WGS 84 ellipsoid for longitude/latitude data). Lines whose cost is NULL or negative are
    /// left out of the graph.
    #[serde(default)]
    pub cost_field: Option<String>,
    /// Every line runs only from its first vertex to its last.
    #[serde(default)]
    pub directed: bool,
    /// A field saying which way each line runs: true, 1, `yes` or `true` (any case) from its
    /// first vertex to its last; -1, `-1` or `reverse` the other way; anything else, or NULL,
    /// both ways. Ignored when `directed`.
    #[serde(default)]
    pub oneway_field: Option<String>,
}

impl GraphParams {
    /// Problems with these parameters for GISPulse's networkx graph (undirected, an edge's
    /// cost its `cost_field` value or its planar length): the cost field must exist, and
    /// directions do not apply (said at `param`: what the step does on that graph, `reads`).
    pub fn simple_graph_problems(
        &self,
        ctx: &LowerContext<'_>,
        param: &str,
        reads: &str,
    ) -> Vec<Problem> {
        let mut problems = match &self.cost_field {
            Some(cost) => {
                require_columns(ctx.input, std::slice::from_ref(cost), ctx.at("cost_field"))
                    .err()
                    .unwrap_or_default()
            }
            None => Vec::new(),
        };
        if self.directed || self.oneway_field.is_some() {
            problems.push(Problem::new(
                ctx.at(param),
                format!("{reads} the undirected graph: directed and oneway_field do not apply"),
            ));
        }
        problems
    }

    /// The graph over the main input, or what is wrong with the parameters.
    pub fn graph(&self, ctx: &LowerContext<'_>) -> Result<GraphSpec, Vec<Problem>> {
        let mut problems = Vec::new();
        for (param, field) in [
            ("cost_field", &self.cost_field),
            ("oneway_field", &self.oneway_field),
        ] {
            if let Some(field) = field
                && let Err(found) =
                    require_columns(ctx.input, std::slice::from_ref(field), ctx.at(param))
            {
                problems.extend(found);
            }
        }
        if let (Some(field), Some(schema)) = (&self.cost_field, ctx.input)
            && let Some(column) = schema.columns.iter().find(|c| &c.name == field)
            && !matches!(
                column.ty,
                FieldType::Integer | FieldType::Double | FieldType::Unknown
            )
        {
            problems.push(Problem::new(
                ctx.at("cost_field"),
                format!("{field} holds {:?} values, not numbers", column.ty),
            ));
        }
        let (geodesic, metres_per_unit) = match ctx.crs().map(crs_units) {
            Some(Some(CrsUnits::Linear { metres_per_unit })) => (false, metres_per_unit),
            Some(None) if self.cost_field.is_none() => {
                problems.push(Problem::new(
                    ctx.at("cost_field"),
                    format!(
                        "the units of {} are not known to geomill, so lengths cannot be given in metres: give a cost_field or reproject the lines",
                        ctx.crs().unwrap_or_default()
                    ),
                ));
                (false, 1.0)
            }
            _ => (true, 1.0),
        };
        if problems.is_empty() {
            Ok(GraphSpec {
                cost: self.cost_field.clone(),
                geodesic: geodesic && self.cost_field.is_none(),
                metres_per_unit,
                directed: self.directed,
                oneway: self.oneway_field.clone(),
            })
        } else {
            Err(problems)
        }
    }
}

/// Checks that the point layer in `others[index]` (named by `param`) has `id_field` (named by
/// `id_param`) and the lines' CRS.
pub fn check_points(
    ctx: &LowerContext<'_>,
    index: usize,
    param: &str,
    id_param: &str,
    id_field: &str,
) -> Vec<Problem> {
    let Some(points) = ctx.others.get(index).copied().flatten() else {
        return Vec::new();
    };
    let mut problems = require_columns(Some(points), &[id_field.to_owned()], ctx.at(id_param))
        .err()
        .unwrap_or_default();
    if let (Some(lines), Some(theirs)) = (ctx.crs(), points.crs.as_deref())
        && lines != theirs
    {
        problems.push(Problem::new(
            ctx.at(param),
            format!("is in {theirs} but the lines are in {lines}: reproject one layer first"),
        ));
    }
    problems
}

/// The step's one operator, or every problem found.
pub fn network_step(
    graph: Result<GraphSpec, Vec<Problem>>,
    mut problems: Vec<Problem>,
    analysis: NetworkAnalysis,
) -> Result<Vec<Operator>, Vec<Problem>> {
    match graph {
        Ok(graph) if problems.is_empty() => {
            Ok(vec![Operator::Network(NetworkOp { graph, analysis })])
        }
        Ok(_) => Err(problems),
        Err(found) => {
            problems.extend(found);
            Err(problems)
        }
    }
}

/// The point layers a route runs between, and the fields naming their points.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RouteEnds {
    /// The step or dataset layer of the origins (points; another geometry counts as its
    /// centroid), in the lines' CRS.
    #[schemars(length(min = 1))]
    pub origins: String,
    /// The origins' field naming each origin (copied to `origin`).
    #[schemars(length(min = 1))]
    pub origin_id: String,
    /// The step or dataset layer of the destinations, as `origins`.
    #[schemars(length(min = 1))]
    pub destinations: String,
    /// The destinations' field naming each destination (copied to `destination`).
    #[schemars(length(min = 1))]
    pub destination_id: String,
}

impl RouteEnds {
    /// The inputs besides the lines, in the operator's order.
    pub fn inputs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("origins", self.origins.clone()),
            ("destinations", self.destinations.clone()),
        ]
    }

    /// Problems with the two point layers.
    pub fn problems(&self, ctx: &LowerContext<'_>) -> Vec<Problem> {
        let mut problems = check_points(ctx, 0, "origins", "origin_id", &self.origin_id);
        problems.extend(check_points(
            ctx,
            1,
            "destinations",
            "destination_id",
            &self.destination_id,
        ));
        problems
    }
}
