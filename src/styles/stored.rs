//! The style stored for a layer, or its default.

use geomill_backends::store::LayerRecord;

use super::model::Style;
use super::qml_write::to_qml;
use crate::blocking::blocking;
use crate::error::AppError;
use crate::state::AppState;

/// The stored style of a dataset's layer (`true`), or the default single symbol for its
/// geometry (`false`).
pub async fn stored_style(
    state: &AppState,
    id: &str,
    layer: &LayerRecord,
) -> Result<(Style, bool), AppError> {
    let store = state.store();
    let (key, name) = (id.to_owned(), layer.name.clone());
    match blocking(move || store.style(&key, &name)).await? {
        Some(text) => serde_json::from_str(&text)
            .map(|style| (style, true))
            .map_err(|e| AppError::internal(&e)),
        None => Ok((Style::default_for(layer.geometry_type.as_deref()), false)),
    }
}

/// The stored style of a layer as QML; `None` when none was stored.
pub async fn stored_qml(
    state: &AppState,
    id: &str,
    layer: &LayerRecord,
) -> Result<Option<String>, AppError> {
    let (style, stored) = stored_style(state, id, layer).await?;
    Ok(stored.then(|| to_qml(&style)))
}
