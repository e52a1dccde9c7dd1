fn main() {
    let path = std::env::args().nth(1).unwrap();
    let layer = geomill_native::layer::read_geoparquet(std::path::Path::new(&path), None).unwrap();
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let out = geomill_native::dissolve::dissolve(&layer).unwrap();
        println!("{:.3} s {}", t.elapsed().as_secs_f64(), out.num_rows());
    }
}
