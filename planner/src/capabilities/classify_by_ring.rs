//! `classify_by_ring`: each feature's distance band (ring) around the features of another layer.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{DistanceUnit, check_new_field, resolve_distance};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::expr::SqlExpr;
use crate::plan::operator::{MapOp, NearestOp, Operator, RefColumns, ValueExpr};
use crate::schema::FieldType;
use crate::sql::quote::{ident, number};

/// Most rings a step may ask for.
const MAX_RINGS: usize = 100;

/// Sort each feature into distance rings around the features of `ref_layer`: `ring_field`
/// (default `ring`) gets 1 for the innermost ring, 2 for the next, and so on, NULL beyond the
/// last ring; `distance_field` (default `distance`) gets the distance to the nearest reference
/// feature (0 inside or touching one), in `unit`. `rings` lists the rings' outer distances,
/// strictly ascending (rings of equal width `w`: `[w, 2w, 3w]`). A ring holds its outer bound,
/// not its inner one: ring 1 is 0 ≤ distance ≤ `rings[0]`, ring k is `rings[k-2]` < distance ≤
/// `rings[k-1]` (pandas' `cut` with `right=True`); a first ring of 0 holds the features inside
/// or touching a reference feature. `unit` defaults to the units of the data's CRS (`crs`:
/// degrees on lon/lat data, as `nearest_neighbor` measures); metres, kilometres, feet and miles
/// are converted on projected data and refused on geographic (lon/lat) data, or data whose CRS
/// is unknown: a distance in metres to a line or polygon there needs a projection (`reproject`
/// first). Distances are planar (GEOS), the same on every engine. Every input feature is kept
/// once, with its attributes and geometry. A NULL or empty geometry gets NULL ring and
/// distance; NULL and empty reference geometries are ignored, and an empty reference layer
/// leaves every ring and distance NULL.
///
/// With `ring_value_field` instead of `rings`, the reference features are the rings
/// themselves (isochrones, buffers), each named by its value of that numeric field: a feature
/// gets in `value_field` (default `ring_value`) the smallest value of the rings it intersects
/// (whose polygon holds its centroid, with `use_centroid`), `outside_value` (default NULL)
/// when none does; and in `ring_field` the rank of that value among the layer's distinct ring
/// values (1 for the smallest), their count + 1 when it is none of them.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ClassifyByRing {
    /// The step or dataset layer the rings surround (or, with `ring_value_field`, that holds
    /// them).
    #[schemars(length(min = 1))]
    pub ref_layer: String,
    /// The rings' outer distances, strictly ascending, each at least 0 (1 to 100 rings).
    #[serde(default)]
    #[schemars(length(max = 100))]
    pub rings: Vec<f64>,
    /// The reference layer's numeric field naming each ring feature: rings taken from the
    /// layer instead of `rings` distances.
    #[serde(default)]
    pub ring_value_field: Option<String>,
    /// With `ring_value_field`: the field receiving the smallest ring value (default
    /// `ring_value`).
    #[serde(default = "default_value_field")]
    #[schemars(length(min = 1))]
    pub value_field: String,
    /// With `ring_value_field`: the value of a feature no ring holds (default NULL).
    #[serde(default)]
    pub outside_value: Option<f64>,
    /// With `ring_value_field`: test each feature's centroid within the rings instead of its
    /// geometry against them (default false).
    #[serde(default)]
    pub use_centroid: bool,
    /// Unit of `rings` and of the distance field (default: the CRS's units).
    #[serde(default = "default_unit")]
    pub unit: DistanceUnit,
    /// Field receiving the ring number (1 for the innermost).
    #[serde(default = "default_ring_field")]
    #[schemars(length(min = 1))]
    pub ring_field: String,
    /// Field receiving the distance to the nearest reference feature.
    #[serde(default = "default_distance_field")]
    #[schemars(length(min = 1))]
    pub distance_field: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_unit() -> DistanceUnit {
    DistanceUnit::Crs
}

fn default_ring_field() -> String {
    "ring".to_owned()
}

fn default_distance_field() -> String {
    "distance".to_owned()
}

fn default_value_field() -> String {
    "ring_value".to_owned()
}

impl ClassifyByRing {
    fn check_rings(&self, ctx: &LowerContext<'_>) -> Vec<Problem> {
        let path = ctx.at("rings");
        if self.rings.is_empty() || self.rings.len() > MAX_RINGS {
            return vec![Problem::new(
                path,
                format!("needs 1 to {MAX_RINGS} distances, got {}", self.rings.len()),
            )];
        }
        if let Some(bad) = self.rings.iter().find(|r| !(r.is_finite() && **r >= 0.0)) {
            return vec![Problem::new(
                path,
                format!("every distance must be a number of at least 0, got {bad}"),
            )];
        }
        match self.rings.windows(2).find(|pair| pair[0] >= pair[1]) {
            Some(pair) => vec![Problem::new(
                path,
                format!(
                    "the distances must be strictly ascending: {} then {}",
                    pair[0], pair[1]
                ),
            )],
            None => Vec::new(),
        }
    }

    /// Units of `unit` in one unit of the data's CRS.
    fn factor(&self, ctx: &LowerContext<'_>) -> Result<f64, Vec<Problem>> {
        let one = resolve_distance(1.0, self.unit, ctx, "unit")?;
        if one.geodesic {
            return Err(vec![Problem::new(
                ctx.at("unit"),
                "rings in metres, kilometres, feet or miles need projected data: the input is geographic (lon/lat) or its CRS is unknown; reproject it first, or give the rings in degrees with unit \"degrees\"",
            )]);
        }
        Ok(1.0 / one.value)
    }
}

/// `CASE WHEN d <= r1 THEN 1 WHEN d <= r2 THEN 2 ... END`: NULL for a NULL distance and beyond
/// the last ring.
fn ring_case(distance: &str, rings: &[f64]) -> Result<String, String> {
    let mut case = String::from("CASE");
    for (index, ring) in rings.iter().enumerate() {
        case.push_str(&format!(
            " WHEN {distance} <= {} THEN {}",
            number(*ring)?,
            index + 1
        ));
    }
    case.push_str(" END");
    Ok(case)
}

impl CapabilityParams for ClassifyByRing {
    const NAME: &'static str = "classify_by_ring";
    const GROUP: Group = Group::CrossLayer;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("ref_layer", self.ref_layer.clone())]
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if let Some(values) = &self.ring_value_field {
            return super::ring_layer::lower(self, values, ctx);
        }
        let mut problems = self.check_rings(ctx);
        if self.outside_value.is_some() || self.use_centroid {
            problems.push(Problem::new(
                ctx.at("ring_value_field"),
                "outside_value and use_centroid apply to rings from the layer: name its ring_value_field",
            ));
        }
        problems.extend(check_new_field(&self.ring_field, ctx, "ring_field"));
        problems.extend(check_new_field(
            &self.distance_field,
            ctx,
            "distance_field",
        ));
        if self.ring_field == self.distance_field {
            problems.push(Problem::new(
                ctx.at("ring_field"),
                "must differ from distance_field",
            ));
        }
        let factor = self.factor(ctx);
        if !problems.is_empty() {
            return Err(problems);
        }
        let factor = factor?;
        let column = ident(&self.distance_field);
        let distance = if factor == 1.0 {
            column
        } else {
            let factor = number(factor).map_err(|m| vec![Problem::new(ctx.at("unit"), m)])?;
            format!("{column} * {factor}")
        };
        let expr = |text: &str| {
            SqlExpr::parse(text).map_err(|m| vec![Problem::new(ctx.at("rings"), m)])
        };
        let ring = ring_case(&distance, &self.rings)
            .map_err(|m| vec![Problem::new(ctx.at("rings"), m)])?;
        let mut set = Vec::new();
        if factor != 1.0 {
            set.push((
                self.distance_field.clone(),
                ValueExpr::Sql(expr(&distance)?),
                FieldType::Double,
            ));
        }
        set.push((
            self.ring_field.clone(),
            ValueExpr::Sql(expr(&ring)?),
            FieldType::Integer,
        ));
        Ok(vec![
            Operator::Nearest(NearestOp {
                columns: RefColumns::Only(Vec::new()),
                max_distance: None,
                distance_field: self.distance_field.clone(),
                locate: None,
                reference_transform: None,
            }),
            Operator::Map(MapOp {
                set,
                ..MapOp::default()
            }),
        ])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plan::operator::AggFunc;
    use crate::plan::ops::rank_in::RankInOp;
    use crate::schema::{Column, GEOM, Schema};

    fn schema(crs: &str) -> Schema {
        Schema {
            columns: vec![
                Column {
                    name: "name".into(),
                    ty: FieldType::Text,
                },
                Column {
                    name: GEOM.into(),
                    ty: FieldType::Geometry,
                },
            ],
            crs: Some(crs.into()),
        }
    }

    fn lower(params: serde_json::Value, input: &Schema) -> Result<Vec<Operator>, Vec<Problem>> {
        let params: ClassifyByRing = serde_json::from_value(params).unwrap();
        let ctx = LowerContext {
            step_id: "rings",
            path: "p",
            input: Some(input),
            others: &[],
            rasters: None,
        };
        params.lower(&ctx)
    }

    #[test]
    fn rings_bound_each_band_above() {
        let ops = lower(
            json!({"ref_layer": "borders", "rings": [0, 0.5, 2]}),
            &schema("EPSG:4326"),
        )
        .unwrap();
        let [Operator::Nearest(nearest), Operator::Map(map)] = ops.as_slice() else {
            panic!("{ops:?}")
        };
        assert_eq!(nearest.columns, RefColumns::Only(Vec::new()));
        assert_eq!(nearest.distance_field, "distance");
        let [(name, ValueExpr::Sql(ring), FieldType::Integer)] = map.set.as_slice() else {
            panic!("{map:?}")
        };
        assert_eq!(name, "ring");
        assert_eq!(
            ring.to_sql(),
            "CASE WHEN \"distance\" <= 0 THEN 1 WHEN \"distance\" <= 0.5 THEN 2 WHEN \"distance\" <= 2 THEN 3 END"
        );
    }

    #[test]
    fn metric_rings_are_converted_on_projected_data_and_refused_on_lonlat() {
        let ops = lower(
            json!({"ref_layer": "b", "rings": [100, 500], "unit": "meters"}),
            &schema("EPSG:2263"),
        )
        .unwrap();
        let Operator::Map(map) = &ops[1] else {
            panic!("{ops:?}")
        };
        let [(distance, ValueExpr::Sql(scaled), _), (_, ValueExpr::Sql(ring), _)] =
            map.set.as_slice()
        else {
            panic!("{map:?}")
        };
        assert_eq!(distance, "distance");
        let factor: f64 = scaled
            .to_sql()
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!((factor - 1200.0 / 3937.0).abs() < 1e-15, "{scaled}");
        assert!(ring.to_sql().contains("\"distance\" * 0.3048"), "{ring}");
        let refused = lower(
            json!({"ref_layer": "b", "rings": [100], "unit": "meters"}),
            &schema("EPSG:4326"),
        )
        .unwrap_err();
        assert_eq!(refused[0].path, "p.unit");
        assert!(refused[0].message.contains("reproject"), "{refused:?}");
    }

    #[test]
    fn bad_rings_and_fields_are_named() {
        let input = schema("EPSG:3857");
        for (rings, says) in [
            (json!([]), "needs 1 to 100"),
            (json!([5, 5]), "strictly ascending"),
            (json!([2, 1]), "strictly ascending"),
            (json!([-1]), "at least 0"),
        ] {
            let problems = lower(json!({"ref_layer": "b", "rings": rings}), &input).unwrap_err();
            assert!(problems[0].message.contains(says), "{problems:?}");
            assert_eq!(problems[0].path, "p.rings");
        }
        let problems = lower(
            json!({"ref_layer": "b", "rings": [1], "ring_field": "name", "distance_field": "geom"}),
            &input,
        )
        .unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["p.ring_field", "p.distance_field"]);
    }

    #[test]
    fn rings_from_a_layer_rank_the_smallest_ring_meeting_each_feature() {
        let ops = lower(
            json!({"ref_layer": "isochrones", "ring_value_field": "budget", "outside_value": 99}),
            &schema("EPSG:4326"),
        )
        .unwrap();
        let [
            Operator::SpatialAggregate(aggregate),
            Operator::Map(_),
            Operator::Owned(rank),
        ] = ops.as_slice()
        else {
            panic!("{ops:?}")
        };
        let rank = rank.downcast::<RankInOp>().expect("a RankIn");
        assert_eq!(aggregate.aggregates[0].func, AggFunc::Min);
        assert_eq!(
            (rank.field.as_str(), rank.values.as_str(), rank.output.as_str()),
            ("ring_value", "budget", "ring")
        );
    }

    #[test]
    fn distances_and_a_ring_layer_are_not_mixed() {
        let both = lower(
            json!({"ref_layer": "r", "ring_value_field": "budget", "rings": [1]}),
            &schema("EPSG:3857"),
        )
        .unwrap_err();
        assert!(both[0].message.contains("not both"), "{both:?}");
        let stray = lower(
            json!({"ref_layer": "r", "rings": [1], "use_centroid": true}),
            &schema("EPSG:3857"),
        )
        .unwrap_err();
        assert!(stray[0].message.contains("ring_value_field"), "{stray:?}");
    }
}
