//! Reading WKB without allocating per point (2D points, polygons, multipolygons) and writing it.

use geo::{Coord, LineString, MultiPolygon, Polygon};

/// Why a WKB value could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WkbError {
    #[error("the WKB ends early (byte {at} of {len})")]
    Truncated { at: usize, len: usize },
    #[error("the WKB byte order marker is {0}, not 0 or 1")]
    ByteOrder(u8),
    #[error("WKB geometry type {0} is not supported here (2D points and polygons only)")]
    Type(u32),
    #[error("the WKB nests collections deeper than {0} levels")]
    TooDeep(u32),
    #[error("the WKB holds {found} where {expected} is expected")]
    Unexpected {
        expected: &'static str,
        found: &'static str,
    },
}

/// A cursor over one WKB value.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    little: bool,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            at: 0,
            little: true,
        }
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], WkbError> {
        let end = self.at + N;
        let slice = self.bytes.get(self.at..end).ok_or(WkbError::Truncated {
            at: self.at,
            len: self.bytes.len(),
        })?;
        self.at = end;
        let mut out = [0u8; N];
        out.copy_from_slice(slice);
        Ok(out)
    }

    /// The byte order and the 2D geometry type code of the value that starts here.
    fn header(&mut self) -> Result<u32, WkbError> {
        self.little = match self.take::<1>()?[0] {
            0 => false,
            1 => true,
            other => return Err(WkbError::ByteOrder(other)),
        };
        let code = self.u32()?;
        // Any Z/M/SRID flag (EWKB high bits, ISO thousands) is not 2D: refused below.
        Ok(code)
    }

    fn u32(&mut self) -> Result<u32, WkbError> {
        let raw = self.take::<4>()?;
        Ok(if self.little {
            u32::from_le_bytes(raw)
        } else {
            u32::from_be_bytes(raw)
        })
    }

    fn f64(&mut self) -> Result<f64, WkbError> {
        let raw = self.take::<8>()?;
        Ok(if self.little {
            f64::from_le_bytes(raw)
        } else {
            f64::from_be_bytes(raw)
        })
    }

    /// A count, checked against the bytes left so that a corrupt count cannot allocate much.
    fn count(&mut self, item_bytes: usize) -> Result<usize, WkbError> {
        let n = self.u32()? as usize;
        let left = self.bytes.len().saturating_sub(self.at);
        if n.saturating_mul(item_bytes) > left {
            return Err(WkbError::Truncated {
                at: self.bytes.len() + 1,
                len: self.bytes.len(),
            });
        }
        Ok(n)
    }

    fn ring(&mut self) -> Result<LineString<f64>, WkbError> {
        let n = self.count(16)?;
        let mut coords = Vec::with_capacity(n);
        for _ in 0..n {
            coords.push(Coord {
                x: self.f64()?,
                y: self.f64()?,
            });
        }
        Ok(LineString(coords))
    }

    fn polygon_body(&mut self) -> Result<Option<Polygon<f64>>, WkbError> {
        let rings = self.count(4)?;
        if rings == 0 {
            return Ok(None);
        }
        let exterior = self.ring()?;
        let mut holes = Vec::with_capacity(rings - 1);
        for _ in 1..rings {
            holes.push(self.ring()?);
        }
        Ok(Some(Polygon::new(exterior, holes)))
    }
}

/// How deep collections may nest in a value [`envelope`] reads.
const MAX_NESTING: u32 = 64;

impl Reader<'_> {
    /// The base type code (1–7) and ordinates per point of the value that starts here, whatever
    /// flags it carries (EWKB's Z, M and SRID bits, ISO's thousands); its SRID is skipped.
    fn any_header(&mut self) -> Result<(u32, usize), WkbError> {
        let code = self.header()?;
        if code & 0x2000_0000 != 0 {
            self.u32()?;
        }
        let plain = code & 0x0FFF_FFFF;
        let (ewkb_z, ewkb_m) = (code & 0x8000_0000 != 0, code & 0x4000_0000 != 0);
        let (z, m) = match plain / 1000 {
            0 => (ewkb_z, ewkb_m),
            1 => (true, false),
            2 => (false, true),
            3 => (true, true),
            _ => return Err(WkbError::Type(code)),
        };
        Ok((plain % 1000, 2 + usize::from(z) + usize::from(m)))
    }

    /// Widens `bounds` by `n` points of `dims` ordinates (NaN points, the empty point, skipped).
    fn widen_by_points(
        &mut self,
        n: usize,
        dims: usize,
        bounds: &mut [f64; 4],
    ) -> Result<(), WkbError> {
        for _ in 0..n {
            let x = self.f64()?;
            let y = self.f64()?;
            for _ in 2..dims {
                self.f64()?;
            }
            if !x.is_nan() && !y.is_nan() {
                bounds[0] = bounds[0].min(x);
                bounds[1] = bounds[1].min(y);
                bounds[2] = bounds[2].max(x);
                bounds[3] = bounds[3].max(y);
            }
        }
        Ok(())
    }

    /// Widens `bounds` by the value that starts here, `depth` collections deep.
    fn widen(&mut self, bounds: &mut [f64; 4], depth: u32) -> Result<(), WkbError> {
        if depth > MAX_NESTING {
            return Err(WkbError::TooDeep(MAX_NESTING));
        }
        let (base, dims) = self.any_header()?;
        match base {
            1 => self.widen_by_points(1, dims, bounds),
            2 => {
                let n = self.count(8 * dims)?;
                self.widen_by_points(n, dims, bounds)
            }
            3 => {
                let rings = self.count(4)?;
                for _ in 0..rings {
                    let n = self.count(8 * dims)?;
                    self.widen_by_points(n, dims, bounds)?;
                }
                Ok(())
            }
            4..=7 => {
                let parts = self.count(9)?;
                for _ in 0..parts {
                    self.widen(bounds, depth + 1)?;
                }
                Ok(())
            }
            other => Err(WkbError::Type(other)),
        }
    }
}

/// The base geometry type (1 point ... 7 collection) of a WKB value and whether it has Z or M
/// ordinates, whatever flags (EWKB or ISO) say so.
pub fn base_type(bytes: &[u8]) -> Result<(u32, bool), WkbError> {
    let (base, dims) = Reader::new(bytes).any_header()?;
    Ok((base, dims > 2))
}

/// The 2D envelope `[min_x, min_y, max_x, max_y]` of any WKB value (Z and M read and left
/// out); `None` when it has no coordinates (empty, or NaN only).
pub fn envelope(bytes: &[u8]) -> Result<Option<[f64; 4]>, WkbError> {
    let mut bounds = [
        f64::INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    ];
    Reader::new(bytes).widen(&mut bounds, 0)?;
    Ok((bounds[0] <= bounds[2]).then_some(bounds))
}

fn type_name(code: u32) -> &'static str {
    match code {
        1 => "a point",
        2 => "a linestring",
        3 => "a polygon",
        4 => "a multipoint",
        5 => "a multilinestring",
        6 => "a multipolygon",
        7 => "a geometry collection",
        _ => "a geometry with Z, M or SRID",
    }
}

/// The 2D geometry type code of a WKB value (1 point ... 7 collection; anything with Z, M
/// or an SRID gives a code above 7).
pub fn geometry_type(bytes: &[u8]) -> Result<u32, WkbError> {
    Reader::new(bytes).header()
}

/// The coordinates of a 2D WKB point; `None` for the empty point (NaN coordinates).
pub fn read_point(bytes: &[u8]) -> Result<Option<(f64, f64)>, WkbError> {
    let mut reader = Reader::new(bytes);
    match reader.header()? {
        1 => {
            let x = reader.f64()?;
            let y = reader.f64()?;
            Ok((!x.is_nan() && !y.is_nan()).then_some((x, y)))
        }
        code @ 2..=7 => Err(WkbError::Unexpected {
            expected: "a point",
            found: type_name(code),
        }),
        code => Err(WkbError::Type(code)),
    }
}

/// The coordinates of a WKB point with its Z when it has one (ISO codes 1001 and 3001, EWKB's Z
/// flag; an M is skipped, an EWKB SRID read past); `None` for the empty point.
pub fn read_point_z(bytes: &[u8]) -> Result<Option<(f64, f64, Option<f64>)>, WkbError> {
    let mut reader = Reader::new(bytes);
    let code = reader.header()?;
    let (base, has_z, has_m) = if code & 0xE000_0000 != 0 {
        if code & 0x2000_0000 != 0 {
            reader.u32()?;
        }
        (
            code & 0x0FFF_FFFF,
            code & 0x8000_0000 != 0,
            code & 0x4000_0000 != 0,
        )
    } else if code < 4000 {
        (
            code % 1000,
            matches!(code / 1000, 1 | 3),
            matches!(code / 1000, 2 | 3),
        )
    } else {
        return Err(WkbError::Type(code));
    };
    match base {
        1 => {
            let x = reader.f64()?;
            let y = reader.f64()?;
            let z = if has_z { Some(reader.f64()?) } else { None };
            if has_m {
                reader.f64()?;
            }
            Ok((!x.is_nan() && !y.is_nan()).then_some((x, y, z.filter(|z| !z.is_nan()))))
        }
        2..=7 => Err(WkbError::Unexpected {
            expected: "a point",
            found: type_name(base),
        }),
        _ => Err(WkbError::Type(code)),
    }
}

/// A 2D WKB polygon or multipolygon as a multipolygon (empty parts dropped).
pub fn read_polygonal(bytes: &[u8]) -> Result<MultiPolygon<f64>, WkbError> {
    let mut reader = Reader::new(bytes);
    match reader.header()? {
        3 => Ok(MultiPolygon(reader.polygon_body()?.into_iter().collect())),
        6 => {
            let n = reader.count(9)?;
            let mut parts = Vec::with_capacity(n);
            for _ in 0..n {
                match reader.header()? {
                    3 => parts.extend(reader.polygon_body()?),
                    code => {
                        return Err(WkbError::Unexpected {
                            expected: "a polygon inside a multipolygon",
                            found: type_name(code),
                        });
                    }
                }
            }
            Ok(MultiPolygon(parts))
        }
        code @ (1 | 2 | 4 | 5 | 7) => Err(WkbError::Unexpected {
            expected: "a polygon or multipolygon",
            found: type_name(code),
        }),
        code => Err(WkbError::Type(code)),
    }
}

/// Little-endian WKB of a 2D point.
pub fn write_point(x: f64, y: f64, out: &mut Vec<u8>) {
    out.push(1);
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&x.to_le_bytes());
    out.extend_from_slice(&y.to_le_bytes());
}

fn write_polygon_body(polygon: &Polygon<f64>, out: &mut Vec<u8>) {
    let rings = 1 + polygon.interiors().len();
    out.extend_from_slice(&(rings as u32).to_le_bytes());
    for ring in std::iter::once(polygon.exterior()).chain(polygon.interiors()) {
        out.extend_from_slice(&(ring.0.len() as u32).to_le_bytes());
        for c in &ring.0 {
            out.extend_from_slice(&c.x.to_le_bytes());
            out.extend_from_slice(&c.y.to_le_bytes());
        }
    }
}

/// Little-endian WKB of a polygon of one ring (`ring` closed: its last point is its first).
pub fn write_ring_polygon(ring: &[[f64; 2]], out: &mut Vec<u8>) {
    out.push(1);
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    write_points(ring, out);
}

/// Little-endian WKB of a line string.
pub fn write_line(points: &[[f64; 2]], out: &mut Vec<u8>) {
    out.push(1);
    out.extend_from_slice(&2u32.to_le_bytes());
    write_points(points, out);
}

fn write_points(points: &[[f64; 2]], out: &mut Vec<u8>) {
    out.extend_from_slice(&(points.len() as u32).to_le_bytes());
    for [x, y] in points {
        out.extend_from_slice(&x.to_le_bytes());
        out.extend_from_slice(&y.to_le_bytes());
    }
}

/// Little-endian WKB of a polygon (one part) or multipolygon.
pub fn write_polygonal(shape: &MultiPolygon<f64>, out: &mut Vec<u8>) {
    out.push(1);
    if let [single] = shape.0.as_slice() {
        out.extend_from_slice(&3u32.to_le_bytes());
        write_polygon_body(single, out);
        return;
    }
    out.extend_from_slice(&6u32.to_le_bytes());
    out.extend_from_slice(&(shape.0.len() as u32).to_le_bytes());
    for polygon in &shape.0 {
        out.push(1);
        out.extend_from_slice(&3u32.to_le_bytes());
        write_polygon_body(polygon, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_round_trip_and_bad_bytes_are_errors() {
        let mut out = Vec::new();
        write_point(1.5, -2.0, &mut out);
        assert_eq!(read_point(&out), Ok(Some((1.5, -2.0))));
        assert!(matches!(
            read_point(&out[..10]),
            Err(WkbError::Truncated { .. })
        ));
        assert_eq!(read_point(&[7]), Err(WkbError::ByteOrder(7)));
        let mut empty = Vec::new();
        write_point(f64::NAN, f64::NAN, &mut empty);
        assert_eq!(read_point(&empty), Ok(None));
        assert!(read_polygonal(&out).is_err());
        assert_eq!(envelope(&out), Ok(Some([1.5, -2.0, 1.5, -2.0])));
        assert_eq!(envelope(&empty), Ok(None));
    }

    #[test]
    fn points_with_z_are_read_in_iso_and_ewkb() {
        let point = |code: u32, values: &[f64], srid: bool| {
            let mut out = vec![1u8];
            out.extend_from_slice(&code.to_le_bytes());
            if srid {
                out.extend_from_slice(&2994u32.to_le_bytes());
            }
            values
                .iter()
                .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
            out
        };
        let z = Ok(Some((1.0, 2.0, Some(3.0))));
        assert_eq!(read_point_z(&point(1001, &[1.0, 2.0, 3.0], false)), z);
        assert_eq!(read_point_z(&point(3001, &[1.0, 2.0, 3.0, 9.0], false)), z);
        assert_eq!(read_point_z(&point(0xA000_0001, &[1.0, 2.0, 3.0], true)), z);
        assert_eq!(
            read_point_z(&point(2001, &[1.0, 2.0, 9.0], false)),
            Ok(Some((1.0, 2.0, None)))
        );
        assert_eq!(
            read_point_z(&point(1, &[1.0, 2.0], false)),
            Ok(Some((1.0, 2.0, None)))
        );
        assert!(read_point_z(&point(1001, &[1.0, 2.0], false)).is_err());
        assert!(read_point_z(&point(1003, &[], false)).is_err());
        assert!(read_point_z(&point(5001, &[], false)).is_err());
    }

    #[test]
    fn polygons_round_trip_and_huge_counts_do_not_allocate() {
        let square = Polygon::new(
            LineString::from(vec![(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 0.0)]),
            vec![],
        );
        let shape = MultiPolygon(vec![square.clone(), square]);
        let mut out = Vec::new();
        write_polygonal(&shape, &mut out);
        assert_eq!(read_polygonal(&out), Ok(shape));
        let bogus = [1, 3, 0, 0, 0, 1, 0, 0, 0, 255, 255, 255, 255];
        assert!(read_polygonal(&bogus).is_err());
    }

    #[test]
    fn envelopes_of_every_type_with_z_and_m() {
        let mut line = Vec::new();
        write_line(&[[0.0, 5.0], [3.0, -1.0]], &mut line);
        assert_eq!(envelope(&line), Ok(Some([0.0, -1.0, 3.0, 5.0])));
        // An ISO LineString Z (1002) of two points, big-endian.
        let mut z = vec![0u8];
        z.extend_from_slice(&1002u32.to_be_bytes());
        z.extend_from_slice(&2u32.to_be_bytes());
        for v in [1.0f64, 2.0, 100.0, -4.0, 8.0, -100.0] {
            z.extend_from_slice(&v.to_be_bytes());
        }
        assert_eq!(envelope(&z), Ok(Some([-4.0, 2.0, 1.0, 8.0])));
        assert_eq!(base_type(&z), Ok((2, true)));
        // A collection holding the line and an EWKB point ZM with an SRID.
        let mut collection = vec![1u8];
        collection.extend_from_slice(&7u32.to_le_bytes());
        collection.extend_from_slice(&2u32.to_le_bytes());
        collection.extend_from_slice(&line);
        collection.push(1);
        collection.extend_from_slice(&(0xE000_0001u32).to_le_bytes());
        collection.extend_from_slice(&4326u32.to_le_bytes());
        for v in [9.0f64, 9.5, 1.0, 2.0] {
            collection.extend_from_slice(&v.to_le_bytes());
        }
        assert_eq!(envelope(&collection), Ok(Some([0.0, -1.0, 9.0, 9.5])));
        assert!(envelope(&collection[..collection.len() - 3]).is_err());
        // An empty multipolygon, and a collection nested past the limit.
        let mut none = vec![1u8];
        none.extend_from_slice(&6u32.to_le_bytes());
        none.extend_from_slice(&0u32.to_le_bytes());
        assert_eq!(envelope(&none), Ok(None));
        let mut deep = Vec::new();
        for _ in 0..=MAX_NESTING + 1 {
            deep.push(1u8);
            deep.extend_from_slice(&7u32.to_le_bytes());
            deep.extend_from_slice(&1u32.to_le_bytes());
        }
        deep.extend_from_slice(&none);
        assert_eq!(envelope(&deep), Err(WkbError::TooDeep(MAX_NESTING)));
    }
}
