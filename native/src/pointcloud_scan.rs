//! A LAS/LAZ file's points streamed to a step that reduces them, never held whole: only the
//! coordinates and the class are read (a LAZ of point format 6 to 10 decompresses only those
//! layers, in parallel over its chunks), a class filter applied as they come.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use geomill_planner::plan::ops::pointcloud::ClassFilter;
use laz::{DecompressionSelection, ParLasZipDecompressor};

use crate::pointcloud::{CloudError, CloudInfo, invalid, open};

/// Points decompressed at a time: enough LAZ chunks (50,000 points each by default) to keep
/// every core busy, a few tens of MB of records.
const POINTS_AT_ONCE: usize = 1 << 20;

/// One point as the file stores it: its x, y and z as integers of the header's scale and
/// offset (12 bytes: a cloud of tens of millions of points held this way stays small).
pub type RawXyz = [i32; 3];

/// The header's transforms of x, y and z.
#[derive(Debug, Clone, Copy)]
pub struct Transforms(pub [las::Transform; 3]);

impl Transforms {
    /// The coordinates of `point` as laspy computes them (`X * scale + offset`).
    pub fn apply(&self, point: RawXyz) -> (f64, f64, f64) {
        let [x, y, z] = self.0;
        (x.direct(point[0]), y.direct(point[1]), z.direct(point[2]))
    }
}

/// What a scan read: the file's description, its transforms and the points that passed.
pub struct Scanned {
    pub info: CloudInfo,
    pub transforms: Transforms,
    pub points: Vec<RawXyz>,
}

/// Where a record holds its class: byte 15 (5 bits) in point formats 0 to 5, byte 16 in 6 to
/// 10.
fn class_of(record: &[u8], extended: bool) -> u8 {
    if extended {
        record[16]
    } else {
        record[15] & 0x1f
    }
}

fn xyz_of(record: &[u8]) -> RawXyz {
    let int = |at: usize| {
        i32::from_le_bytes([record[at], record[at + 1], record[at + 2], record[at + 3]])
    };
    [int(0), int(4), int(8)]
}

/// Reads the points of the file at `path` that pass `classes` (all without; the class filter's
/// column is the file's class whatever its name), in file order,
/// as raw integers; a truncated file or a point count the file does not hold is an error
/// naming it.
pub fn scan(path: &Path, classes: Option<&ClassFilter>) -> Result<Scanned, CloudError> {
    let (reader, info) = open(path)?;
    let header = reader.header().clone();
    drop(reader);
    let format = header.point_format();
    let extended = format.is_extended;
    let record = usize::from(format.len());
    let t = header.transforms();
    let transforms = Transforms([t.x, t.y, t.z]);
    let mut file = File::open(path).map_err(|e| invalid(path, e))?;
    let raw = las::raw::Header::read_from(BufReader::new(&file)).map_err(|e| invalid(path, e))?;
    file.seek(SeekFrom::Start(u64::from(raw.offset_to_point_data)))
        .map_err(|e| invalid(path, e))?;
    let total = info.points;
    let mut points = Vec::new();
    let mut keep = |records: &[u8]| {
        for record in records.chunks_exact(record) {
            if classes.is_none_or(|c| c.passes(Some(i64::from(class_of(record, extended))))) {
                points.push(xyz_of(record));
            }
        }
    };
    let mut buffer = Vec::new();
    let mut read = 0_u64;
    let at_once = u64::try_from(POINTS_AT_ONCE).unwrap_or(u64::MAX);
    let short = |read: u64, e: &dyn std::fmt::Display| {
        invalid(path, format!("after {read} of {total} points: {e}"))
    };
    if format.is_compressed {
        let vlr = header.laz_vlr().map_err(|e| invalid(path, e))?;
        let selection = DecompressionSelection(
            DecompressionSelection::XY_RETURNS_CHANNEL
                | DecompressionSelection::Z
                | DecompressionSelection::CLASSIFICATION,
        );
        let mut decompressor =
            ParLasZipDecompressor::selective(BufReader::new(file), vlr, selection)
                .map_err(|e| invalid(path, e))?;
        while read < total {
            let count = (total - read).min(at_once);
            buffer.resize(usize::try_from(count).unwrap_or(usize::MAX) * record, 0);
            decompressor
                .decompress_many(&mut buffer)
                .map_err(|e| short(read, &e))?;
            keep(&buffer);
            read += count;
        }
    } else {
        let mut file = BufReader::new(file);
        while read < total {
            let count = (total - read).min(at_once);
            buffer.resize(usize::try_from(count).unwrap_or(usize::MAX) * record, 0);
            file.read_exact(&mut buffer).map_err(|e| short(read, &e))?;
            keep(&buffer);
            read += count;
        }
    }
    Ok(Scanned {
        info,
        transforms,
        points,
    })
}
