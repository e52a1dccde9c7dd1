//! Vector tiles of the OGC API read by a real client: GDAL's MVT driver decodes them to the
//! features they should hold.

use crate::common::gdal;
use crate::common::world_server::{feature_count, world};
use reqwest::StatusCode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tiles_decode_with_gdal_to_the_features_they_should_hold() {
    let world = world().await;
    let cities = world.collection("cities");
    let (status, _, tilejson) = world.get(&format!("/ogc/collections/{cities}/tiles")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(tilejson["vector_layers"][0]["id"], "cities");
    assert_eq!(tilejson["vector_layers"][0]["fields"]["name"], "String");

    // Tile 1/1/0 (the north-east quarter) holds the cities in it and in its buffer.
    let response = world
        .client
        .get(
            world
                .server
                .url(&format!("/ogc/collections/{cities}/tiles/1/1/0.mvt")),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["content-type"],
        "application/vnd.mapbox-vector-tile"
    );
    assert_eq!(response.headers()["cache-control"], "public, max-age=300");
    let etag = response.headers()["etag"].to_str().unwrap().to_owned();
    let again = world
        .client
        .get(
            world
                .server
                .url(&format!("/ogc/collections/{cities}/tiles/1/1/0.mvt")),
        )
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(
        again.status(),
        StatusCode::NOT_MODIFIED,
        "a client's copy is still good"
    );
    assert_eq!(again.headers()["etag"].to_str().unwrap(), etag);
    let scratch = tempfile::tempdir().unwrap();
    let folder = scratch.path().join("1").join("1");
    std::fs::create_dir_all(&folder).unwrap();
    let tile = folder.join("0.mvt");
    std::fs::write(&tile, response.bytes().await.unwrap()).unwrap();
    let decoded = gdal(
        "ogrinfo",
        &["-ro", "-al", &format!("MVT:{}", tile.display())],
    );
    assert!(decoded.contains("Layer name: cities"), "{decoded}");
    let [west, south, east, north] = geomill_backends::store::tile_bounds(1, 1, 0, 256.0 / 4096.0);
    let spat = [west, south, east, north].map(|n| n.to_string());
    let expected = feature_count(&gdal(
        "ogrinfo",
        &[
            "-ro",
            "-so",
            "-spat",
            &spat[0],
            &spat[1],
            &spat[2],
            &spat[3],
            &world.gpkg,
            "cities",
        ],
    ));
    assert_eq!(feature_count(&decoded), expected, "{decoded}");
    assert!(
        decoded.contains("name (String) = Tokyo"),
        "attributes are kept"
    );

    // Every country tile of zoom 0 to 2 is served: polygons GEOS cannot rebuild on the tile grid
    // are encoded again, simplified, rather than failing the tile.
    let countries = world.collection("countries");
    for z in 0..=2_u32 {
        for x in 0..(1 << z) {
            for y in 0..(1 << z) {
                let (status, _, body) = world
                    .get(&format!(
                        "/ogc/collections/{countries}/tiles/{z}/{x}/{y}.mvt"
                    ))
                    .await;
                assert!(
                    status == StatusCode::OK || status == StatusCode::NO_CONTENT,
                    "{z}/{x}/{y}: {status} {body}"
                );
            }
        }
    }

    // The open Pacific has no country: 204. Outside the tile matrix: 400.
    let (status, _, _) = world
        .get(&format!("/ogc/collections/{countries}/tiles/5/2/16.mvt"))
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    for path in ["1/2/0.mvt", "23/0/0.mvt", "1/0/0.png", "a/0/0.mvt"] {
        let (status, _, body) = world
            .get(&format!("/ogc/collections/{countries}/tiles/{path}"))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
    }
}
