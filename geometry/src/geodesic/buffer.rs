//! The geodesic buffer of one WKB geometry. Points: the circle GEOS would draw, each vertex placed
//! by the direct geodesic problem on WGS 84 (exact distances). Lines, polygons and collections:
//! GEOS's buffer in the [`LocalFrame`] of the feature's centroid, brought back with longitudes
//! continuous around the centre. Empty geometries (no centroid) and points buffered by a
//! distance ≤ 0 give no geometry (NULL), as on PostGIS.

use geo::{Destination, Geodesic, LineString, MultiPolygon, Point, Polygon};
use geos::{Geom, Geometry};

use super::LocalFrame;
use crate::wkb;

/// A buffer distance (metres) and quadrant segments, with the circle its points get.
#[derive(Debug, Clone)]
pub struct GeodesicBuffer {
    distance: f64,
    segments: u32,
    /// The vertices GEOS puts on a circle of `|distance|` around the origin.
    circle: Vec<(f64, f64)>,
}

impl GeodesicBuffer {
    pub fn new(distance: f64, segments: u32) -> Result<Self, String> {
        Ok(Self {
            distance,
            segments,
            circle: circle(distance.abs(), segments)?,
        })
    }

    pub fn distance(&self) -> f64 {
        self.distance
    }

    pub fn segments(&self) -> u32 {
        self.segments
    }

    /// The buffer of one geometry (WKB in, WKB out); an error names what GEOS or the WKB
    /// reader refused.
    pub fn apply(&self, bytes: &[u8]) -> Result<Option<Vec<u8>>, String> {
        if wkb::geometry_type(bytes).is_ok_and(|t| t != 1) {
            return self.framed(bytes);
        }
        let Some((lon0, lat0)) = wkb::read_point(bytes).map_err(|e| e.to_string())? else {
            return Ok(None);
        };
        if self.distance <= 0.0 {
            return Ok(None);
        }
        let centre = Point::new(lon0, lat0);
        let coords: Vec<(f64, f64)> = self
            .circle
            .iter()
            .map(|&(x, y)| {
                let to = Geodesic.destination(centre, x.atan2(y).to_degrees(), x.hypot(y));
                let lon = lon0 + (to.x() - lon0 + 180.0).rem_euclid(360.0) - 180.0;
                (lon, to.y())
            })
            .collect();
        let mut out = Vec::with_capacity(9 + 16 * coords.len());
        let polygon = Polygon::new(LineString::from(coords), vec![]);
        wkb::write_polygonal(&MultiPolygon(vec![polygon]), &mut out);
        Ok(Some(out))
    }

    /// A line, polygon or collection buffered in the frame of its centroid.
    fn framed(&self, bytes: &[u8]) -> Result<Option<Vec<u8>>, String> {
        let geometry = Geometry::new_from_wkb(bytes).map_err(|e| e.to_string())?;
        if geometry.is_empty().map_err(|e| e.to_string())? {
            return Ok(None);
        }
        let centroid = geometry.get_centroid().map_err(|e| e.to_string())?;
        let lon0 = centroid.get_x().map_err(|e| e.to_string())?;
        let lat0 = centroid.get_y().map_err(|e| e.to_string())?;
        let frame = LocalFrame::new(lon0, lat0);
        let buffered = geometry
            .transform_xy(|lon, lat| Some(frame.forward(lon, lat)))
            .and_then(|planar| planar.buffer(self.distance, self.segments as i32))
            .and_then(|buffer| buffer.transform_xy(|x, y| Some(frame.inverse(x, y))))
            .map_err(|e| e.to_string())?;
        let out = buffered.to_wkb().map_err(|e| e.to_string())?;
        Ok(Some(out.as_ref().to_vec()))
    }
}

/// The vertices GEOS puts on a circle of `radius` around the origin (`segments` per quarter).
fn circle(radius: f64, segments: u32) -> Result<Vec<(f64, f64)>, String> {
    let mut origin = Vec::new();
    wkb::write_point(0.0, 0.0, &mut origin);
    let disc = Geometry::new_from_wkb(&origin)
        .and_then(|p| p.buffer(radius, segments as i32))
        .and_then(|d| d.to_wkb())
        .map_err(|e| e.to_string())?;
    let shape = wkb::read_polygonal(disc.as_ref()).map_err(|e| e.to_string())?;
    Ok(shape
        .0
        .first()
        .map(|p| p.exterior().0.iter().map(|c| (c.x, c.y)).collect())
        .unwrap_or_default())
}
