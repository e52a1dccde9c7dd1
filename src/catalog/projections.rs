//! The EPSG coordinate reference systems users pick from (geographic 2D and projected, not
//! deprecated), read once from PROJ's own database (`proj.db`, opened read-only): code, name,
//! kind, area of use with its bounds, and the unit of the first axis.

use std::path::PathBuf;
use std::sync::OnceLock;

use rusqlite::{Connection, OpenFlags};
use serde::Serialize;

/// One coordinate reference system.
#[derive(Debug, Clone, Serialize, PartialEq, utoipa::ToSchema)]
pub struct Projection {
    /// `EPSG:<code>`.
    pub code: String,
    pub name: String,
    /// `geographic 2D` or `projected`.
    pub kind: String,
    /// The area of use as PROJ describes it (`World.`, `France - onshore and offshore, ...`).
    pub area: Option<String>,
    /// The area's short name in EPSG (`World`, `France`).
    pub area_name: Option<String>,
    /// The area's bounds in degrees: west, south, east, north.
    pub bounds: Option<[f64; 4]>,
    /// The unit of the first axis, as EPSG names it (`metre`, `US survey foot`, ...).
    pub unit: Option<String>,
}

/// Every geographic 2D and projected EPSG CRS, one usage (the first) each, ordered by code.
const QUERY: &str = "
WITH crs AS (
  SELECT 'geodetic_crs' AS tbl, auth_name, code, name, type AS kind,
         coordinate_system_auth_name AS cs_auth, coordinate_system_code AS cs_code
    FROM geodetic_crs WHERE auth_name = 'EPSG' AND deprecated = 0 AND type = 'geographic 2D'
  UNION ALL
  SELECT 'projected_crs', auth_name, code, name, 'projected',
         coordinate_system_auth_name, coordinate_system_code
    FROM projected_crs WHERE auth_name = 'EPSG' AND deprecated = 0
)
SELECT CAST(crs.code AS TEXT), crs.name, crs.kind, e.description, e.west_lon, e.south_lat, e.east_lon, e.north_lat,
  (SELECT u.name FROM axis a
     JOIN unit_of_measure u ON u.auth_name = a.uom_auth_name AND u.code = a.uom_code
    WHERE a.coordinate_system_auth_name = crs.cs_auth AND a.coordinate_system_code = crs.cs_code
    ORDER BY a.coordinate_system_order LIMIT 1),
  e.name
FROM crs
LEFT JOIN extent e ON (e.auth_name, e.code) = (
  SELECT us.extent_auth_name, us.extent_code FROM usage us
   WHERE us.object_table_name = crs.tbl AND us.object_auth_name = crs.auth_name
     AND us.object_code = crs.code
   ORDER BY us.rowid LIMIT 1)
ORDER BY CAST(crs.code AS INTEGER)";

/// Where PROJ keeps its database: `PROJ_DATA` or `PROJ_LIB` when set, else Debian's place.
fn database() -> PathBuf {
    ["PROJ_DATA", "PROJ_LIB"]
        .iter()
        .find_map(std::env::var_os)
        .map_or_else(|| PathBuf::from("/usr/share/proj"), PathBuf::from)
        .join("proj.db")
}

fn read_all() -> Result<Vec<Projection>, String> {
    let path = database();
    let connection = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| format!("PROJ's database {}: {e}", path.display()))?;
    let mut statement = connection.prepare(QUERY).map_err(|e| e.to_string())?;
    let rows = statement
        .query_map([], |r| {
            let bounds: [Option<f64>; 4] = [r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?];
            Ok(Projection {
                code: format!("EPSG:{}", r.get::<_, String>(0)?),
                name: r.get(1)?,
                kind: r.get(2)?,
                area: r.get(3)?,
                bounds: match bounds {
                    [Some(w), Some(s), Some(e), Some(n)] => Some([w, s, e, n]),
                    _ => None,
                },
                unit: r.get(8)?,
                area_name: r.get(9)?,
            })
        })
        .map_err(|e| e.to_string())?;
    rows.collect::<Result<_, _>>().map_err(|e| e.to_string())
}

/// Every projection (read once per process), or why PROJ's database could not be read.
pub fn all() -> Result<&'static [Projection], String> {
    static ALL: OnceLock<Result<Vec<Projection>, String>> = OnceLock::new();
    ALL.get_or_init(read_all)
        .as_ref()
        .map(Vec::as_slice)
        .map_err(Clone::clone)
}

/// Whether `projection` answers the search `q`: its code (`4326` or `EPSG:4326`), or words of
/// its name or area of use (case-insensitive, every word).
pub fn matches(projection: &Projection, q: &str) -> bool {
    let q = q.trim();
    if q.is_empty() {
        return true;
    }
    let code = q
        .strip_prefix("EPSG:")
        .or_else(|| q.strip_prefix("epsg:"))
        .unwrap_or(q);
    if projection.code.strip_prefix("EPSG:") == Some(code) {
        return true;
    }
    let haystack = format!(
        "{} {} {}",
        projection.name,
        projection.area_name.as_deref().unwrap_or_default(),
        projection.area.as_deref().unwrap_or_default()
    )
    .to_lowercase();
    q.to_lowercase()
        .split_whitespace()
        .all(|word| haystack.contains(word))
}
