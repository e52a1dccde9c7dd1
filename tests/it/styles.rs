//! Layer styles: the JSON model stored and written as QML, QML from QGIS imported (what the
//! model does not hold reported), and the style carried into a GeoPackage export, where GDAL
//! (and QGIS) find it in `layer_styles`.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{Value, json};

use crate::common;
use common::{call, call_raw, get, post_json, world_state};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/it/qml/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn put(uri: &str, body: &Value) -> Request<Body> {
    Request::put(uri)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

fn import(uri: &str, qml: String) -> Request<Body> {
    Request::post(uri)
        .header("content-type", "text/xml")
        .body(Body::from(qml))
        .unwrap()
}

async fn world_id(state: &geomill::state::AppState) -> String {
    let (_, datasets) = call(state, get("/datasets")).await;
    datasets["datasets"][0]["id"].as_str().unwrap().to_owned()
}

fn graduated() -> Value {
    json!({"renderer": "graduated", "field": "pop_est",
        "symbol": {"kind": "fill", "color": "#cccccc"},
        "ranges": [
            {"lower": 140.0, "upper": 8776109.0, "label": "small", "symbol": {"color": "#ffeda0", "opacity": 0.9}},
            {"lower": 8776109.0, "upper": 1397715000.0, "label": "large & <busy>", "symbol": {"color": "#f03b20", "stroke_width": 0.5}}],
        "label": {"field": "name", "size": 8.0, "color": "#111111"}})
}

#[tokio::test]
async fn a_style_round_trips_through_qml() {
    let (_dir, state, _) = world_state(|_| {}).await;
    let id = world_id(&state).await;
    let base = format!("/datasets/{id}/styles?layer=countries");
    // No style yet: the default single symbol for polygons.
    let (status, default) = call(&state, get(&format!("{base}&format=json"))).await;
    assert_eq!(status, StatusCode::OK, "{default}");
    assert_eq!(default["renderer"], "single");
    assert_eq!(default["symbol"]["kind"], "fill");
    let (status, stored) = call(&state, put(&base, &graduated())).await;
    assert_eq!(status, StatusCode::OK, "{stored}");
    let (status, qml) = call_raw(&state, get(&base)).await;
    assert_eq!(status, StatusCode::OK);
    let qml = String::from_utf8(qml).unwrap();
    assert!(
        qml.contains(r#"<renderer-v2 type="graduatedSymbol" attr="pop_est""#),
        "{qml}"
    );
    assert!(qml.contains(r#"value="240,59,32,255""#), "{qml}");
    // Re-imported, the QML gives the same model back, dropping nothing.
    let (status, imported) = call(
        &state,
        import(
            &format!("/datasets/{id}/styles/import?layer=countries"),
            qml,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{imported}");
    assert_eq!(imported["dropped"], json!([]), "{imported}");
    let (_, again) = call(&state, get(&format!("{base}&format=json"))).await;
    assert_eq!(again, stored);
    assert_eq!(again["ranges"][1]["label"], "large & <busy>");
}

#[tokio::test]
async fn qml_files_as_qgis_writes_them_import() {
    let (_dir, state, _) = world_state(|_| {}).await;
    let id = world_id(&state).await;
    let uri = format!("/datasets/{id}/styles/import?layer=countries");
    let (status, single) = call(&state, import(&uri, fixture("single.qml"))).await;
    assert_eq!(status, StatusCode::OK, "{single}");
    assert_eq!(single["style"]["renderer"], "single");
    assert_eq!(single["style"]["symbol"]["color"], "#8dd3c7");
    assert_eq!(single["style"]["symbol"]["stroke_width"], 0.46);
    assert_eq!(single["style"]["symbol"]["opacity"], 0.75);
    let dropped = single["dropped"].to_string();
    assert!(
        dropped.contains("<blendMode>") && dropped.contains("<flags>"),
        "{dropped}"
    );
    // The same file as a form sends it (`curl -F file=@single.qml`, a browser's file input).
    let form =
        crate::common::multipart(&uri, &[("single.qml", fixture("single.qml").into())], None);
    let (status, from_form) = call(&state, form).await;
    assert_eq!(status, StatusCode::OK, "{from_form}");
    assert_eq!(from_form, single);
    let no_file = crate::common::multipart(&uri, &[], Some("single"));
    let (status, body) = call(&state, no_file).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.to_string().contains("field `file`"), "{body}");

    let (status, categorized) = call(&state, import(&uri, fixture("categorized.qml"))).await;
    assert_eq!(status, StatusCode::OK, "{categorized}");
    let style = &categorized["style"];
    assert_eq!(style["renderer"], "categorized");
    assert_eq!(style["field"], "continent");
    assert_eq!(style["categories"].as_array().unwrap().len(), 3);
    assert_eq!(style["categories"][1]["value"], "Asia");
    assert_eq!(style["categories"][1]["symbol"]["color"], "#fc8d62");
    assert_eq!(style["symbol"]["color"], "#e5b636");
    assert_eq!(style["label"]["field"], "name");
    assert_eq!(style["label"]["size"], 8.0);
    let dropped = categorized["dropped"].to_string();
    assert!(dropped.contains("PointPatternFill"), "{dropped}");
    assert!(dropped.contains("render=false"), "{dropped}");

    let (status, graduated) = call(&state, import(&uri, fixture("graduated.qml"))).await;
    assert_eq!(status, StatusCode::OK, "{graduated}");
    let style = &graduated["style"];
    assert_eq!(style["renderer"], "graduated");
    assert_eq!(style["field"], "pop_est");
    assert_eq!(style["ranges"][2]["upper"], 1_397_715_000.0);
    assert_eq!(style["ranges"][0]["symbol"]["color"], "#ffeda0");
    // The stored style is the last imported.
    let (_, stored) = call(
        &state,
        get(&format!(
            "/datasets/{id}/styles?layer=countries&format=json"
        )),
    )
    .await;
    assert_eq!(&stored, style);
}

#[tokio::test]
async fn bad_styles_are_clear_4xx_and_change_nothing() {
    let (_dir, state, _) = world_state(|_| {}).await;
    let id = world_id(&state).await;
    let base = format!("/datasets/{id}/styles?layer=countries");
    let mut bad = graduated();
    bad["ranges"][0]["symbol"]["color"] = json!("red");
    let (status, body) = call(&state, put(&base, &bad)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body.to_string().contains("ranges[0].symbol.color"),
        "{body}"
    );
    let uri = format!("/datasets/{id}/styles/import?layer=countries");
    for (qml, words) in [
        ("not xml at all", "not XML"),
        ("<html/>", "not a QGIS style"),
        (
            r#"<qgis><renderer-v2 type="RuleRenderer"/></qgis>"#,
            "RuleRenderer",
        ),
    ] {
        let (status, body) = call(&state, import(&uri, qml.to_owned())).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{qml}: {body}");
        assert!(body.to_string().contains(words), "{qml}: {body}");
    }
    let (_, stored) = call(&state, get(&format!("{base}&format=json"))).await;
    assert_eq!(stored["renderer"], "single", "nothing was stored: {stored}");
    let (status, _) = call(&state, get(&format!("/datasets/{id}/styles?layer=nope"))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = call(&state, get(&format!("{base}&format=sld"))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_geopackage_export_carries_the_style_in_layer_styles() {
    let (dir, state, _) = world_state(|_| {}).await;
    let id = world_id(&state).await;
    let (status, _) = call(
        &state,
        put(
            &format!("/datasets/{id}/styles?layer=countries"),
            &graduated(),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let request = json!({"dataset_id": id, "format": "gpkg", "layer": "countries"});
    let (status, bytes) =
        call_raw(&state, post_json("/api/portal/datasets/export", &request)).await;
    assert_eq!(status, StatusCode::OK);
    let path = dir.path().join("styled.gpkg");
    std::fs::write(&path, bytes).unwrap();
    let path = path.display().to_string();
    let listing = common::gdal("ogrinfo", &["-ro", "-q", &path]);
    assert!(listing.contains("layer_styles"), "{listing}");
    assert!(listing.contains("countries"), "{listing}");
    let rows = common::gdal(
        "ogrinfo",
        &[
            "-ro",
            "-q",
            &path,
            "-sql",
            "SELECT f_table_name, styleName, useAsDefault, styleQML FROM layer_styles",
        ],
    );
    assert!(rows.contains("f_table_name (String) = countries"), "{rows}");
    assert!(rows.contains("graduatedSymbol"), "{rows}");
    // The features are all there, next to the style.
    let (count, _) = common::ogrinfo_summary(&path, "countries");
    assert_eq!(count, 177);
}
