//! OGC API Features read by real clients: GDAL's OAPIF driver lists and copies the collections
//! of the running server (its tiles, decoded by GDAL's MVT driver, are in `ogc_tiles`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::gdal;
use common::world_server::{feature_count, world};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Features GDAL lists (with a spatial filter, a GeoPackage's `Feature Count` only counts the
/// index's boxes; the listing checks each geometry).
fn listed_features(ogrinfo: &str) -> i64 {
    ogrinfo
        .lines()
        .filter(|l| l.starts_with("OGRFeature("))
        .count() as i64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gdal_lists_and_copies_every_collection_page_by_page() {
    let world = world().await;
    let listing = gdal("ogrinfo", &["-ro", "-q", &world.oapif()]);
    for layer in ["countries", "cities"] {
        assert!(
            listing.contains(&world.collection(layer)),
            "{layer} missing from {listing}"
        );
    }
    let scratch = tempfile::tempdir().unwrap();
    for (layer, page_size) in [("countries", "50"), ("cities", "100")] {
        let copy = scratch
            .path()
            .join(format!("{layer}.gpkg"))
            .display()
            .to_string();
        gdal(
            "ogr2ogr",
            &[
                "-f",
                "GPKG",
                &copy,
                &world.oapif(),
                &world.collection(layer),
                "-oo",
                &format!("PAGE_SIZE={page_size}"),
                "-nln",
                layer,
            ],
        );
        let (expected, _) = common::ogrinfo_summary(&world.gpkg, layer);
        let copied = feature_count(&gdal("ogrinfo", &["-ro", "-so", &copy, layer]));
        assert_eq!(copied, expected, "{layer}");
    }

    // A bbox through GDAL: what DuckDB says intersects it (the SQL endpoint), and what GDAL
    // itself finds in the GeoPackage.
    let countries = world.collection("countries");
    let through_oapif = feature_count(&gdal(
        "ogrinfo",
        &[
            "-ro",
            "-so",
            "-spat",
            "-10",
            "35",
            "30",
            "60",
            &world.oapif(),
            &countries,
        ],
    ));
    let rows: Value = world
        .client
        .post(world.server.url("/api/portal/sql/execute"))
        .json(&json!({"query": "SELECT count(*) AS n FROM \"world.gpkg/countries\" WHERE ST_Intersects(geom, ST_MakeEnvelope(-10, 35, 30, 60))"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(rows["rows"][0]["n"], through_oapif, "{rows}");
    let in_file = listed_features(&gdal(
        "ogrinfo",
        &[
            "-ro",
            "-q",
            "-geom=NO",
            "-spat",
            "-10",
            "35",
            "30",
            "60",
            &world.gpkg,
            "countries",
        ],
    ));
    assert_eq!(in_file, through_oapif);
    assert!(through_oapif > 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_follows_the_standard_and_refuses_bad_parameters() {
    let world = world().await;
    let (status, content_type, landing) = world.get("/ogc").await;
    assert_eq!(
        (status, content_type.as_str()),
        (StatusCode::OK, "application/json")
    );
    let rels: Vec<&str> = landing["links"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["rel"].as_str())
        .collect();
    for rel in ["self", "service-desc", "service-doc", "conformance", "data"] {
        assert!(rels.contains(&rel), "{rel}: {landing}");
    }
    let (_, _, conformance) = world.get("/ogc/conformance").await;
    assert!(
        conformance["conformsTo"]
            .to_string()
            .contains("conf/geojson")
    );

    let countries = world.collection("countries");
    let (status, _, collection) = world.get(&format!("/ogc/collections/{countries}")).await;
    assert_eq!(status, StatusCode::OK);
    let bbox = &collection["extent"]["spatial"]["bbox"][0];
    assert!(
        bbox[0].as_f64().unwrap() < -170.0 && bbox[3].as_f64().unwrap() > 80.0,
        "{collection}"
    );

    // Part 2: the same feature in CRS84, EPSG:4326 (latitude first) and Web Mercator.
    assert_eq!(
        collection["storageCrs"],
        "http://www.opengis.net/def/crs/OGC/1.3/CRS84"
    );
    let epsg = |code: u32| format!("http://www.opengis.net/def/crs/EPSG/0/{code}");
    assert!(
        collection["crs"].to_string().contains(&epsg(3857)),
        "{collection}"
    );
    let first_point = |page: &Value| {
        let ring = &page["features"][0]["geometry"]["coordinates"][0][0];
        [ring[0][0].as_f64().unwrap(), ring[0][1].as_f64().unwrap()]
    };
    let (_, _, crs84) = world
        .get(&format!("/ogc/collections/{countries}/items?limit=1"))
        .await;
    let [lon, lat] = first_point(&crs84);
    let response = world
        .client
        .get(world.server.url(&format!(
            "/ogc/collections/{countries}/items?limit=1&crs={}",
            epsg(4326)
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.headers()["content-crs"].to_str().unwrap(),
        format!("<{}>", epsg(4326))
    );
    let lat_lon: Value = response.json().await.unwrap();
    assert_eq!(first_point(&lat_lon), [lat, lon]);
    let (_, _, mercator) = world
        .get(&format!(
            "/ogc/collections/{countries}/items?limit=1&crs={}",
            epsg(3857)
        ))
        .await;
    let [x, _] = first_point(&mercator);
    assert!(
        (x - lon * 20_037_508.342_789_244 / 180.0).abs() < 1.0,
        "{x} for {lon}"
    );
    // A bbox in EPSG:4326 is latitude first.
    let (_, _, by_lat_lon) = world
        .get(&format!(
            "/ogc/collections/{countries}/items?bbox=35,-10,60,30&bbox-crs={}",
            epsg(4326)
        ))
        .await;
    let (_, _, by_lon_lat) = world
        .get(&format!(
            "/ogc/collections/{countries}/items?bbox=-10,35,30,60"
        ))
        .await;
    assert_eq!(by_lat_lon["numberMatched"], by_lon_lat["numberMatched"]);
    assert!(by_lon_lat["numberMatched"].as_i64().unwrap() > 20);

    // A projected layer is kept, and can be asked for, in its own CRS (New York's feet).
    let zip = common::shared("nybb_16a.zip");
    let boroughs = world.server.upload(&zip, "nybb_16a.zip").await;
    let layer = boroughs["layers"][0]["name"].as_str().unwrap();
    let nybb = format!("{}.{layer}", boroughs["id"].as_str().unwrap());
    let (_, _, described) = world.get(&format!("/ogc/collections/{nybb}")).await;
    assert_eq!(described["storageCrs"], epsg(2263));
    let (_, _, in_feet) = world
        .get(&format!(
            "/ogc/collections/{nybb}/items?limit=1&crs={}",
            epsg(2263)
        ))
        .await;
    let file: Value = serde_json::from_str(&gdal(
        "ogr2ogr",
        &[
            "-f",
            "GeoJSON",
            "/vsistdout/",
            &format!("/vsizip/{}", zip.display()),
            "-limit",
            "1",
        ],
    ))
    .unwrap();
    let polygon = |page: &Value| {
        let c = &page["features"][0]["geometry"]["coordinates"][0][0][0];
        [c[0].as_f64().unwrap(), c[1].as_f64().unwrap()]
    };
    let ([x, y], [fx, fy]) = (polygon(&in_feet), polygon(&file));
    assert!(
        (x - fx).abs() < 0.01 && (y - fy).abs() < 0.01,
        "{x},{y} vs {fx},{fy}"
    );

    // Pages linked by `next` until the last; every feature once.
    let (expected, _) = common::ogrinfo_summary(&world.gpkg, "countries");
    let mut url = format!("/ogc/collections/{countries}/items?limit=50");
    let mut ids = Vec::new();
    loop {
        let (status, content_type, page) = world.get(&url).await;
        assert_eq!(
            (status, content_type.as_str()),
            (StatusCode::OK, "application/geo+json")
        );
        assert_eq!(page["numberMatched"], expected);
        assert_eq!(
            page["numberReturned"].as_u64().unwrap() as usize,
            page["features"].as_array().unwrap().len()
        );
        ids.extend(
            page["features"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["id"].as_i64().unwrap()),
        );
        let next = page["links"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["rel"] == "next");
        match next {
            Some(link) => {
                let href = link["href"].as_str().unwrap();
                url = href
                    .strip_prefix(&world.server.base_url)
                    .unwrap()
                    .to_owned();
            }
            None => break,
        }
    }
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len() as i64, expected);

    let (status, content_type, feature) = world
        .get(&format!("/ogc/collections/{countries}/items/{}", ids[3]))
        .await;
    assert_eq!(
        (status, content_type.as_str()),
        (StatusCode::OK, "application/geo+json")
    );
    assert_eq!(feature["id"], ids[3]);
    assert!(feature["properties"]["name"].is_string());

    for (path, status) in [
        (
            format!("/ogc/collections/{countries}/items/999999"),
            StatusCode::NOT_FOUND,
        ),
        (
            "/ogc/collections/nothing.here/items".to_owned(),
            StatusCode::NOT_FOUND,
        ),
        (
            format!("/ogc/collections/{countries}/items?bbox=1,2,3"),
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("/ogc/collections/{countries}/items?limit=0"),
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("/ogc/collections/{countries}/items?datetime=2020-01-01T00:00:00Z"),
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("/ogc/collections/{countries}/items?colour=red"),
            StatusCode::BAD_REQUEST,
        ),
        (
            format!(
                "/ogc/collections/{countries}/items?crs=http://www.opengis.net/def/crs/EPSG/0/2263"
            ),
            StatusCode::BAD_REQUEST,
        ),
        (
            format!(
                "/ogc/collections/{countries}/items?bbox-crs=http://www.opengis.net/def/crs/EPSG/0/4326"
            ),
            StatusCode::BAD_REQUEST,
        ),
    ] {
        let (got, _, body) = world.get(&path).await;
        assert_eq!(got, status, "{path}: {body}");
        assert!(body["error"]["message"].is_string(), "{path}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cql2_filters_select_what_gdal_selects() {
    let world = world().await;
    let countries = world.collection("countries");
    let items = world
        .server
        .url(&format!("/ogc/collections/{countries}/items"));
    let matched = |params: Vec<(&'static str, String)>| {
        let request = world.client.get(&items).query(&params);
        async move {
            let response = request.send().await.unwrap();
            let status = response.status();
            let body: Value = response.json().await.unwrap();
            (status, body)
        }
    };
    let gdal_count = |extra: &[&str]| {
        let mut args = vec!["-ro", "-q", "-geom=NO"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&[world.gpkg.as_str(), "countries"]);
        listed_features(&gdal("ogrinfo", &args))
    };

    let (_, _, queryables) = world
        .get(&format!("/ogc/collections/{countries}/queryables"))
        .await;
    assert_eq!(
        queryables["properties"]["pop_est"]["type"], "number",
        "{queryables}"
    );
    assert_eq!(queryables["properties"]["name"]["type"], "string");

    let populous = gdal_count(&["-where", "pop_est > 100000000"]);
    let (status, text) = matched(vec![("filter", "pop_est > 100000000".into())]).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(text["numberMatched"], populous);
    let json_filter = json!({"op": ">", "args": [{"property": "pop_est"}, 100_000_000]});
    let (_, as_json) = matched(vec![
        ("filter", json_filter.to_string()),
        ("filter-lang", "cql2-json".into()),
    ])
    .await;
    assert_eq!(as_json["numberMatched"], populous);

    let african_square = gdal_count(&[
        "-where",
        "continent = 'Africa'",
        "-spat",
        "0",
        "0",
        "20",
        "20",
    ]);
    let (_, spatial) = matched(vec![(
        "filter",
        "continent = 'Africa' AND S_INTERSECTS(geometry, POLYGON((0 0, 20 0, 20 20, 0 20, 0 0)))"
            .into(),
    )])
    .await;
    assert_eq!(spatial["numberMatched"], african_square, "{spatial}");
    assert!(african_square > 3);
    let not_in = gdal_count(&[
        "-where",
        "continent NOT IN ('Africa', 'Asia') AND name LIKE 'B%'",
    ]);
    let (_, advanced) = matched(vec![(
        "filter",
        "NOT continent IN ('Africa', 'Asia') AND name LIKE 'B%'".into(),
    )])
    .await;
    assert_eq!(advanced["numberMatched"], not_in);

    for (params, words) in [
        (
            vec![("filter", "colour = 'red'".to_owned())],
            "not a queryable",
        ),
        (vec![("filter", "pop_est >".to_owned())], "filter:"),
        (
            vec![(
                "filter",
                "S_INTERSECTS(geometry, POLYGON((0 0, 1)))".to_owned(),
            )],
            "cannot be evaluated",
        ),
        (
            vec![
                ("filter", "pop_est > 1".to_owned()),
                ("filter-lang", "ecql".to_owned()),
            ],
            "filter-lang",
        ),
        (
            vec![
                ("filter", "pop_est > 1".to_owned()),
                (
                    "filter-crs",
                    "http://www.opengis.net/def/crs/EPSG/0/3857".to_owned(),
                ),
            ],
            "filter-crs",
        ),
    ] {
        let params: Vec<(&'static str, String)> = params;
        let (status, body) = matched(params.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{params:?}: {body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(words),
            "{params:?}: {body}"
        );
    }
}
