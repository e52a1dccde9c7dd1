//! A LAS/LAZ file's points streamed to a step that reduces them, never held whole: only the
//! coordinates and the class are read (a LAZ of point format 6 to 10 decompresses only those
//! layers, in parallel over its chunks), a class filter applied as they come.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use geomill_planner::plan::ops::pointcloud::ClassFilter;
use laz::{DecompressionSelection, ParLasZipDecompressor};
use rayon::prelude::*;

use crate::pointcloud::{CloudError, CloudInfo, invalid, open};

/// Points read at a time from a file without fixed-size LAZ chunks (a LAS file, COPC).
const POINTS_AT_ONCE: usize = 1 << 20;
/// The most bytes of records decompressed at a time (twice this is held: the next records are
/// decompressed while the last are filtered).
const MOST_BYTES_AT_ONCE: u64 = 64 << 20;

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

/// What a scan read: the file's description, its transforms, the points that passed in file
/// order and the lowest and highest raw x and y among them.
pub struct Scanned {
    pub info: CloudInfo,
    pub transforms: Transforms,
    pub points: Vec<RawXyz>,
    pub raw_bounds: Option<RawBounds>,
}

/// The lowest and highest raw x and y of some points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawBounds {
    pub low: [i32; 2],
    pub high: [i32; 2],
}

impl RawBounds {
    fn merge(a: Option<Self>, b: Option<Self>) -> Option<Self> {
        match (a, b) {
            (Some(a), Some(b)) => Some(Self {
                low: [a.low[0].min(b.low[0]), a.low[1].min(b.low[1])],
                high: [a.high[0].max(b.high[0]), a.high[1].max(b.high[1])],
            }),
            (a, b) => a.or(b),
        }
    }
}

impl Scanned {
    /// How many points passed.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The lowest and highest x and y of the points that passed, as laspy computes them: the
    /// transform is monotonic, so these are the transformed raw extremes.
    pub fn bounds(&self) -> Option<((f64, f64), (f64, f64))> {
        let bounds = self.raw_bounds?;
        let [tx, ty, _] = self.transforms.0;
        let (x0, x1) = (tx.direct(bounds.low[0]), tx.direct(bounds.high[0]));
        let (y0, y1) = (ty.direct(bounds.low[1]), ty.direct(bounds.high[1]));
        Some(((x0.min(x1), y0.min(y1)), (x0.max(x1), y0.max(y1))))
    }
}

/// Where a record holds its class: byte 15 (5 bits) in point formats 0 to 5, byte 16 in 6 to
/// 10.
#[inline(always)]
fn class_of(record: &[u8], extended: bool) -> u8 {
    if extended {
        record[16]
    } else {
        record[15] & 0x1f
    }
}

#[inline(always)]
fn xyz_of(record: &[u8]) -> RawXyz {
    let int = |at: usize| {
        i32::from_le_bytes([record[at], record[at + 1], record[at + 2], record[at + 3]])
    };
    [int(0), int(4), int(8)]
}

/// Fills a buffer with the next point records (decompressed or read as they are).
type ReadRecords = Box<dyn FnMut(&mut [u8]) -> Result<(), String> + Send>;

/// Records filtered at a time by one core.
const RECORDS_PER_TASK: usize = 1 << 16;

/// How a scan reads records: their length, where the class is, which classes pass (a table
/// of the 256 class codes a byte holds).
struct RecordFilter {
    length: usize,
    extended: bool,
    passes: [bool; 256],
}

impl RecordFilter {
    /// The points of `records` that pass, in order, in parts (one a core filtered), and their
    /// raw bounds.
    fn kept(&self, records: &[u8]) -> (Vec<Vec<RawXyz>>, Option<RawBounds>) {
        let parts: Vec<(Vec<RawXyz>, Option<RawBounds>)> = records
            .par_chunks(self.length * RECORDS_PER_TASK)
            .map(|task| {
                let passing =
                    |record: &&[u8]| self.passes[usize::from(class_of(record, self.extended))];
                let count = task.chunks_exact(self.length).filter(passing).count();
                let mut points = Vec::with_capacity(count);
                let (mut low, mut high) = ([i32::MAX; 2], [i32::MIN; 2]);
                for record in task.chunks_exact(self.length).filter(passing) {
                    let point = xyz_of(record);
                    low = [low[0].min(point[0]), low[1].min(point[1])];
                    high = [high[0].max(point[0]), high[1].max(point[1])];
                    points.push(point);
                }
                let bounds = (!points.is_empty()).then_some(RawBounds { low, high });
                (points, bounds)
            })
            .collect();
        let bounds = parts
            .iter()
            .fold(None, |b, (_, part)| RawBounds::merge(b, *part));
        let parts = parts
            .into_iter()
            .map(|(points, _)| points)
            .filter(|points| !points.is_empty())
            .collect();
        (parts, bounds)
    }
}

/// Reads the points of the file at `path` that pass `classes` (all without; the class filter's
/// column is the file's class whatever its name), in file order, as raw integers: the next
/// records are decompressed while the last ones are filtered. A truncated file or a point count
/// the file does not hold is an error naming it.
pub fn scan(path: &Path, classes: Option<&ClassFilter>) -> Result<Scanned, CloudError> {
    let (reader, info) = open(path)?;
    let header = reader.header().clone();
    drop(reader);
    let format = header.point_format();
    let filter = RecordFilter {
        length: usize::from(format.len()),
        extended: format.is_extended,
        passes: std::array::from_fn(|code| {
            classes.is_none_or(|c| c.passes(i64::try_from(code).ok()))
        }),
    };
    let t = header.transforms();
    let transforms = Transforms([t.x, t.y, t.z]);
    let mut file = File::open(path).map_err(|e| invalid(path, e))?;
    let raw = las::raw::Header::read_from(BufReader::new(&file)).map_err(|e| invalid(path, e))?;
    file.seek(SeekFrom::Start(u64::from(raw.offset_to_point_data)))
        .map_err(|e| invalid(path, e))?;
    let total = info.points;
    let mut at_once = u64::try_from(POINTS_AT_ONCE).unwrap_or(u64::MAX);
    let mut read: ReadRecords = if format.is_compressed {
        let vlr = header.laz_vlr().map_err(|e| invalid(path, e))?;
        // Whole chunks at a time, several for each core: no chunk is split between two reads
        // (its end would be decompressed alone, on one core).
        if !vlr.uses_variable_size_chunks() && vlr.chunk_size() > 0 {
            let cores = u64::try_from(rayon::current_num_threads()).unwrap_or(1);
            let chunk = u64::from(vlr.chunk_size());
            let most =
                (MOST_BYTES_AT_ONCE / u64::try_from(filter.length).unwrap_or(1).max(1)).max(chunk);
            at_once = (chunk * 16 * cores).min(most / chunk * chunk);
        }
        let selection = DecompressionSelection(
            DecompressionSelection::XY_RETURNS_CHANNEL
                | DecompressionSelection::Z
                | DecompressionSelection::CLASSIFICATION,
        );
        let mut decompressor =
            ParLasZipDecompressor::selective(BufReader::new(file), vlr, selection)
                .map_err(|e| invalid(path, e))?;
        Box::new(move |out: &mut [u8]| decompressor.decompress_many(out).map_err(|e| e.to_string()))
    } else {
        let mut file = BufReader::new(file);
        Box::new(move |out: &mut [u8]| file.read_exact(out).map_err(|e| e.to_string()))
    };
    let mut done = 0_u64;
    let mut next = |buffer: &mut Vec<u8>, done: &mut u64| -> Result<(), CloudError> {
        let count = (total - *done).min(at_once);
        buffer.resize(
            usize::try_from(count).unwrap_or(usize::MAX) * filter.length,
            0,
        );
        if count > 0 {
            read(buffer)
                .map_err(|e| invalid(path, format!("after {done} of {total} points: {e}")))?;
        }
        *done += count;
        Ok(())
    };
    let (mut current, mut following) = (Vec::new(), Vec::new());
    next(&mut current, &mut done)?;
    // Room for every point of the header, one allocation: the pages of the points a filter
    // drops are never touched (the memory of a process is the pages it touches), and the whole
    // goes back to the system when freed.
    let mut points: Vec<RawXyz> = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
    let mut raw_bounds = None;
    while !current.is_empty() {
        let (fetched, (parts, bounds)) =
            rayon::join(|| next(&mut following, &mut done), || filter.kept(&current));
        fetched?;
        for part in parts {
            points.extend_from_slice(&part);
        }
        raw_bounds = RawBounds::merge(raw_bounds, bounds);
        std::mem::swap(&mut current, &mut following);
    }
    Ok(Scanned {
        info,
        transforms,
        points,
        raw_bounds,
    })
}
