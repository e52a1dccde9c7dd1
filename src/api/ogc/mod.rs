//! OGC API Features (Part 1 core, GeoJSON and HTML; Part 2 CRS; Part 3 CQL2 filters) over every
//! dataset layer, Mapbox Vector Tiles with a TileJSON document per collection, and a map page.
//! A collection's id is `<dataset id>.<layer name>`, so it stays the same across renames.

pub mod collections;
pub mod crs;
pub mod html;
pub mod items;
pub mod map;
pub mod tiles;
pub mod wire;

use axum::Router;
use axum::routing::get;

use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/ogc", get(collections::landing))
        .route("/ogc/conformance", get(collections::conformance))
        .route("/ogc/collections", get(collections::collections))
        .route("/ogc/collections/{id}", get(collections::collection))
        .route("/ogc/collections/{id}/items", get(items::items))
        .route(
            "/ogc/collections/{id}/queryables",
            get(collections::queryables),
        )
        .route("/ogc/collections/{id}/items/{feature_id}", get(items::item))
        .route("/ogc/collections/{id}/tiles", get(tiles::tilejson))
        .route("/ogc/collections/{id}/tiles/{z}/{x}/{y}", get(tiles::tile))
        .route("/ogc/collections/{id}/map", get(map::map_page))
        .route("/ogc/assets/{file}", get(map::asset))
}
