//! What the planner knows about relations: columns, their types, the CRS, and the catalog of
//! sources a spec may read. Geometry always travels in a column named `geom`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The name of the geometry column of every relation in a plan.
pub const GEOM: &str = "geom";

/// A column type, as far as the planner needs to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    Integer,
    Double,
    Text,
    Boolean,
    Date,
    Timestamp,
    Geometry,
    /// Known to exist, type not known (an expression the planner does not type).
    Unknown,
}

impl FieldType {
    /// SQL type name (the same in DuckDB and PostgreSQL for these types).
    pub fn sql(self) -> &'static str {
        match self {
            Self::Integer => "BIGINT",
            Self::Double => "DOUBLE PRECISION",
            Self::Text => "TEXT",
            Self::Boolean => "BOOLEAN",
            Self::Date => "DATE",
            Self::Timestamp => "TIMESTAMP",
            Self::Geometry => "GEOMETRY",
            Self::Unknown => "TEXT",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: FieldType,
}

/// Columns in order, and the CRS of `geom` (`EPSG:<n>`) when known.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Schema {
    pub columns: Vec<Column>,
    #[serde(default)]
    pub crs: Option<String>,
}

impl Schema {
    pub fn has(&self, name: &str) -> bool {
        self.columns.iter().any(|c| c.name == name)
    }

    /// A schema of `columns` in `crs`, for tests.
    #[cfg(test)]
    pub fn of(columns: &[(&str, FieldType)], crs: &str) -> Self {
        Self {
            columns: columns
                .iter()
                .map(|(name, ty)| Column {
                    name: (*name).into(),
                    ty: *ty,
                })
                .collect(),
            crs: Some(crs.into()),
        }
    }

    pub fn names(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name.as_str()).collect()
    }

    /// Sets a column: replaces the type in place when it exists, appends otherwise.
    pub fn set(&mut self, name: &str, ty: FieldType) {
        match self.columns.iter_mut().find(|c| c.name == name) {
            Some(column) => column.ty = ty,
            None => self.columns.push(Column {
                name: name.to_owned(),
                ty,
            }),
        }
    }

    pub fn remove(&mut self, name: &str) {
        self.columns.retain(|c| c.name != name);
    }

    /// The columns other than `geom`.
    pub fn attributes(&self) -> impl Iterator<Item = &Column> {
        self.columns.iter().filter(|c| c.name != GEOM)
    }
}

/// The sources a spec may read, by name (a dataset layer, or a table the engine provides).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Catalog {
    pub sources: BTreeMap<String, Schema>,
    /// The raster datasets a run may read and where its raster steps write; `None` when
    /// planning without the server's catalog (a preview): raster names are then neither
    /// resolved nor refused. Never read from a request: the server fills it from its own
    /// datasets.
    #[serde(skip)]
    pub rasters: Option<RasterCatalog>,
}

/// The raster datasets of the server a run may read, and the folder its raster steps write to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RasterCatalog {
    /// By id and by name.
    pub sources: BTreeMap<String, RasterSource>,
    /// The server's folder for the rasters this run writes (each becomes a raster dataset when
    /// the run completes); `None` when the run may not write any (a check, a preview).
    pub outputs: Option<String>,
}

impl RasterCatalog {
    /// The raster a step names: a dataset id or name, or a path as GISPulse's `raster_path`
    /// gives it, matched by its file name (`data/dem.tif` names the dataset `dem.tif`, else
    /// `dem`) — never opened as a path.
    pub fn find(&self, named: &str) -> Option<&RasterSource> {
        if let Some(source) = self.sources.get(named) {
            return Some(source);
        }
        let file = named.rsplit(['/', '\\']).next().unwrap_or(named);
        let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
        self.sources.get(file).or_else(|| self.sources.get(stem))
    }
}

/// A raster dataset as planning needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct RasterSource {
    /// The stored file.
    pub path: String,
    /// How many bands it has.
    pub bands: usize,
    /// `EPSG:<code>` when its CRS has one.
    pub crs: Option<String>,
}

impl Catalog {
    pub fn get(&self, name: &str) -> Option<&Schema> {
        self.sources.get(name)
    }
}

/// How distances are measured in a CRS.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CrsUnits {
    /// Geographic: coordinates in degrees.
    Degrees,
    /// Projected, with the length of one unit in metres.
    Linear { metres_per_unit: f64 },
}

/// The units of the common CRSs; `None` when the planner does not know the CRS.
pub fn crs_units(crs: &str) -> Option<CrsUnits> {
    let code: u32 = crs.strip_prefix("EPSG:")?.parse().ok()?;
    match code {
        4326 | 4269 | 4258 | 4283 | 4617 | 4674 | 4019 => Some(CrsUnits::Degrees),
        // US survey foot.
        2263 | 2229 | 2230 | 2231 | 2249 | 2260 | 2261 | 2262 | 2264 | 2272 | 2276 | 2277 => {
            Some(CrsUnits::Linear {
                metres_per_unit: 1200.0 / 3937.0,
            })
        }
        3857 | 3395 | 2154 | 27700 | 3035 | 3067 | 25832 | 25833 | 5070 | 6933 => {
            Some(CrsUnits::Linear {
                metres_per_unit: 1.0,
            })
        }
        32601..=32660 | 32701..=32760 | 26901..=26923 | 26701..=26722 => Some(CrsUnits::Linear {
            metres_per_unit: 1.0,
        }),
        _ => None,
    }
}
