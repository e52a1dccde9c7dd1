//! Longitude/latitude boxes as OGC API Features defines them: a box whose west edge is east of
//! its east edge crosses the antimeridian, and covers two ranges of longitude.

/// The one or two ordinary boxes `[west, south, east, north]` that make up `bbox`: a box with
/// `west > east` spans the antimeridian and is cut there.
pub fn bbox_parts(bbox: [f64; 4]) -> Vec<[f64; 4]> {
    let [west, south, east, north] = bbox;
    if west > east {
        vec![[west, south, 180.0, north], [-180.0, south, east, north]]
    } else {
        vec![bbox]
    }
}

#[cfg(test)]
mod tests {
    use super::bbox_parts;

    #[test]
    fn a_box_crossing_the_antimeridian_is_cut_there() {
        assert_eq!(
            bbox_parts([170.0, 50.0, -170.0, 60.0]),
            [[170.0, 50.0, 180.0, 60.0], [-180.0, 50.0, -170.0, 60.0]]
        );
        assert_eq!(bbox_parts([1.0, 2.0, 3.0, 4.0]), [[1.0, 2.0, 3.0, 4.0]]);
    }
}
