//! `line_locate_point`: where each point lies along its nearest line of another layer.

use schemars::JsonSchema;
use serde::Deserialize;

use super::checks::{check_new_field, require_columns};
use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{LocateAlong, NearestOp, Operator, RefColumns};

/// For each point, find the nearest line of `ref_layer` and locate the point along it:
/// `fraction_field` (default `fraction`) gets where the point projects on the line, as a
/// fraction of the line's length from its start (0) to its end (1) (`ST_LineLocatePoint`;
/// Shapely's `line.project(point, normalized=True)`), `distance_field` (default `distance`)
/// the distance from the point to the line in the units of the data's CRS (degrees on lon/lat
/// data, as `nearest_neighbor` measures), and the line's attributes named in `columns`
/// (default: all; `[]`: none; a name the input already has is prefixed with `ref_`). Asked
/// for, `measure_field` gets the distance along the line from its start (the fraction times
/// the line's length, CRS units: Shapely's `line.project(point)`) and `line_index_field` the
/// line's 0-based position among `ref_layer`'s rows, in the layer's order. `work_crs` (an
/// `EPSG:<code>`) runs the search in that CRS, both layers transformed, as `nearest_neighbor`'s. Only the LineStrings
/// and MultiLineStrings of `ref_layer` are searched (other types, NULL and empty lines are
/// ignored). A MultiLineString is located along the line its parts make when joined end to
/// start (`line_merge` with `directed`); one whose parts do not join into a single line gets a
/// NULL fraction, its distance and attributes still given. A line of zero length gives 0. Only
/// points are located: NULL and empty geometries, and every other type (MultiPoints too:
/// `multipart_to_singleparts` first), get NULL fraction, distance and attributes, unless
/// `centroids` locates another geometry by its centroid. Every input
/// feature is kept once, with its attributes and geometry. When several lines are equally
/// near, the one whose geometry hashes lowest is chosen, as `nearest_neighbor` chooses.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct LineLocatePoint {
    /// The step or dataset layer holding the lines.
    #[schemars(length(min = 1))]
    pub ref_layer: String,
    /// Line attributes to bring (default: all; `[]`: none).
    #[serde(default)]
    pub columns: Option<Vec<String>>,
    /// Field receiving the fraction of the line's length (0 at its start, 1 at its end).
    #[serde(default = "default_fraction_field")]
    #[schemars(length(min = 1))]
    pub fraction_field: String,
    /// Field receiving the distance from the point to the line, in CRS units.
    #[serde(default = "default_distance_field")]
    #[schemars(length(min = 1))]
    pub distance_field: String,
    /// Field receiving the distance along the line from its start, in CRS units (default none).
    #[serde(default)]
    pub measure_field: Option<String>,
    /// Field receiving the line's 0-based position among `ref_layer`'s rows (default none).
    #[serde(default)]
    pub line_index_field: Option<String>,
    /// Locate a geometry other than a point by its centroid (default false: NULLs).
    #[serde(default)]
    pub centroids: bool,
    /// Search in this CRS (`EPSG:<code>`): both layers transformed, the output back.
    #[serde(default)]
    pub work_crs: Option<String>,
    #[serde(flatten)]
    pub common: CommonParams,
}

fn default_fraction_field() -> String {
    "fraction".to_owned()
}

fn default_distance_field() -> String {
    "distance".to_owned()
}

impl CapabilityParams for LineLocatePoint {
    const NAME: &'static str = "line_locate_point";
    const GROUP: Group = Group::CrossLayer;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn other_inputs(&self) -> Vec<(&'static str, String)> {
        vec![("ref_layer", self.ref_layer.clone())]
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        super::work_crs::within_searching(self.work_crs.as_deref(), ctx, |inner, transform| {
            self.lower_here(inner, transform)
        })
    }
}

impl LineLocatePoint {
    /// The new fields with the parameter naming each.
    fn new_fields(&self) -> Vec<(&'static str, &str)> {
        let mut fields = vec![
            ("fraction_field", self.fraction_field.as_str()),
            ("distance_field", self.distance_field.as_str()),
        ];
        fields.extend(self.measure_field.as_deref().map(|f| ("measure_field", f)));
        fields.extend(
            self.line_index_field
                .as_deref()
                .map(|f| ("line_index_field", f)),
        );
        fields
    }

    fn lower_here(
        &self,
        ctx: &LowerContext<'_>,
        reference_transform: Option<(String, String)>,
    ) -> Result<Vec<Operator>, Vec<Problem>> {
        let fields = self.new_fields();
        let mut problems = Vec::new();
        for (i, (param, name)) in fields.iter().enumerate() {
            problems.extend(check_new_field(name, ctx, param));
            if let Some((other, _)) = fields[..i].iter().find(|(_, n)| n == name) {
                problems.push(Problem::new(
                    ctx.at(param),
                    format!("must differ from {other}"),
                ));
            }
        }
        let columns = self.columns.as_deref().unwrap_or_default();
        if let Err(found) = require_columns(
            ctx.others.first().copied().flatten(),
            columns,
            ctx.at("columns"),
        ) {
            problems.extend(found);
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(vec![Operator::Nearest(NearestOp {
            columns: match &self.columns {
                None => RefColumns::All,
                Some(columns) => RefColumns::Only(columns.clone()),
            },
            max_distance: None,
            distance_field: self.distance_field.clone(),
            locate: Some(LocateAlong {
                fraction_field: self.fraction_field.clone(),
                measure_field: self.measure_field.clone(),
                line_index_field: self.line_index_field.clone(),
                centroids: self.centroids,
            }),
            reference_transform,
        })])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plan::native::native_support;
    use crate::schema::{Column, FieldType, GEOM, Schema};

    fn lines() -> Schema {
        Schema {
            columns: vec![
                Column {
                    name: "line_id".into(),
                    ty: FieldType::Integer,
                },
                Column {
                    name: GEOM.into(),
                    ty: FieldType::Geometry,
                },
            ],
            crs: Some("EPSG:2263".into()),
        }
    }

    fn lower(params: serde_json::Value) -> Result<Vec<Operator>, Vec<Problem>> {
        let params: LineLocatePoint = serde_json::from_value(params).unwrap();
        let lines = lines();
        let others = [Some(&lines)];
        let ctx = LowerContext {
            step_id: "locate",
            path: "p",
            input: Some(&lines),
            others: &others,
            rasters: None,
        };
        params.lower(&ctx)
    }

    #[test]
    fn locates_along_the_nearest_line_off_the_native_kernel() {
        let ops = lower(json!({"ref_layer": "lines", "columns": ["line_id"],
            "distance_field": "gap"}))
        .unwrap();
        let [op @ Operator::Nearest(nearest)] = ops.as_slice() else {
            panic!("{ops:?}")
        };
        assert_eq!(
            nearest.locate.as_ref().map(|l| l.fraction_field.as_str()),
            Some("fraction")
        );
        assert_eq!(nearest.distance_field, "gap");
        assert_eq!(nearest.columns, RefColumns::Only(vec!["line_id".into()]));
        let declined = native_support(op).unwrap_err();
        assert!(declined.contains("locating points along lines"), "{declined}");
    }

    #[test]
    fn measures_along_and_numbers_the_line_locating_centroids() {
        let ops = lower(json!({"ref_layer": "lines", "columns": [], "measure_field": "along",
            "line_index_field": "line_no", "centroids": true}))
        .unwrap();
        let [Operator::Nearest(nearest)] = ops.as_slice() else {
            panic!("{ops:?}")
        };
        assert_eq!(nearest.columns, RefColumns::Only(Vec::new()));
        let lines = lines();
        let inputs = [
            crate::sql::select::Input {
                from: "\"points\"",
                schema: Some(&lines),
            },
            crate::sql::select::Input {
                from: "\"lines\"",
                schema: Some(&lines),
            },
        ];
        for dialect in crate::sql::Dialect::ALL {
            let sql = crate::sql::select::select(&ops[0], &inputs, None, dialect).unwrap();
            assert!(sql.contains("ST_Centroid(t.\"geom\")"), "{sql}");
            assert!(sql.contains("row_number() OVER () - 1"), "{sql}");
            assert!(sql.contains("AS \"line_no\""), "{sql}");
            assert!(sql.contains(") * ST_Length(c.\"__geomill_line\") AS \"along\""), "{sql}");
            assert!(!sql.contains("r.\"line_id\""), "columns: [] brings none: {sql}");
        }
        let problems = lower(json!({"ref_layer": "lines", "measure_field": "fraction"})).unwrap_err();
        assert_eq!(problems[0].message, "must differ from fraction_field");
    }

    #[test]
    fn unknown_columns_and_clashing_fields_are_refused() {
        let problems = lower(json!({"ref_layer": "lines", "columns": ["nope"],
            "fraction_field": "line_id"}))
        .unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["p.fraction_field", "p.columns"]);
        let problems =
            lower(json!({"ref_layer": "lines", "fraction_field": "f", "distance_field": "f"}))
                .unwrap_err();
        assert!(problems[0].message.contains("must differ"), "{problems:?}");
    }
}
