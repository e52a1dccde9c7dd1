//! `export`: write the input to a file.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CapabilityParams, CommonParams, Group, LowerContext};
use crate::error::Problem;
use crate::plan::operator::{ExportFormat, ExportOp, Operator};

/// Write the input's features to the file `destination`, in `format` (default: from the file's
/// extension: `.gpkg`, `.geojson`/`.json`, `.fgb`, `.parquet`/`.geoparquet`, `.shp`/`.zip`,
/// `.csv`, `.kml`, `.gml`). `{name}` placeholders in `destination` are replaced by run variables,
/// e.g. `out/countries_{date}.gpkg`. The path may not contain `..` segments. Nothing reads an
/// export step's output: it ends its branch of the pipeline.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Export {
    /// The file to write.
    #[schemars(length(min = 1))]
    pub destination: String,
    #[serde(flatten)]
    pub common: CommonParams,
}

/// Why `destination` is refused, if it is.
fn destination_problem(destination: &str) -> Option<&'static str> {
    if destination.trim().is_empty() {
        Some("the destination is empty")
    } else if destination.contains('\0') {
        Some("the destination contains a NUL character")
    } else if destination
        .split(['/', '\\'])
        .any(|segment| segment == "..")
    {
        Some("the destination may not contain .. segments")
    } else {
        None
    }
}

impl CapabilityParams for Export {
    const NAME: &'static str = "export";
    const GROUP: Group = Group::Other;

    fn common(&self) -> &CommonParams {
        &self.common
    }

    fn lower(&self, ctx: &LowerContext<'_>) -> Result<Vec<Operator>, Vec<Problem>> {
        if let Some(message) = destination_problem(&self.destination) {
            return Err(vec![Problem::new(ctx.at("destination"), message)]);
        }
        let Some(format) = self
            .common
            .format
            .or_else(|| ExportFormat::from_extension(&self.destination))
        else {
            return Err(vec![Problem::new(
                ctx.at("format"),
                format!(
                    "cannot tell the format from {}: give format (gpkg, geojson, fgb, parquet, shp, csv, kml, gml)",
                    self.destination
                ),
            )]);
        };
        if let Some(refusal) = format.step_refusal() {
            return Err(vec![Problem::new(ctx.at("format"), refusal)]);
        }
        Ok(vec![Operator::Export(ExportOp {
            destination: self.destination.clone(),
            format,
        })])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lower(params: serde_json::Value) -> Result<Vec<Operator>, Vec<Problem>> {
        let params: Export = serde_json::from_value(params).unwrap();
        let ctx = LowerContext {
            step_id: "e",
            path: "p",
            input: None,
            others: &[],
            rasters: None,
        };
        params.lower(&ctx)
    }

    #[test]
    fn format_from_extension_or_parameter() {
        assert_eq!(
            lower(json!({"destination": "out/countries.GeoJSON"})).unwrap(),
            [Operator::Export(ExportOp {
                destination: "out/countries.GeoJSON".into(),
                format: ExportFormat::Geojson
            })]
        );
        assert_eq!(
            lower(json!({"destination": "out/countries", "format": "fgb"})).unwrap(),
            [Operator::Export(ExportOp {
                destination: "out/countries".into(),
                format: ExportFormat::Fgb
            })]
        );
        assert_eq!(
            lower(json!({"destination": "out/countries.txt"})).unwrap_err()[0].path,
            "p.format"
        );
    }

    #[test]
    fn unsafe_destinations_are_refused() {
        for destination in [
            "../secret.gpkg",
            "out/../../x.csv",
            "out\\..\\x.csv",
            "a\0b.csv",
        ] {
            let problems = lower(json!({ "destination": destination })).unwrap_err();
            assert_eq!(problems[0].path, "p.destination", "{destination}");
        }
        assert!(lower(json!({"destination": "out/a..b.csv"})).is_ok());
    }
}
