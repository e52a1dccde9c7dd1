//! Finding a layer of a stored dataset by name, its features loaded (a remote layer is fetched
//! on first use).

use super::lookup::find;
use super::remote;
use crate::error::AppError;
use crate::state::AppState;

/// A layer of a dataset, its features loaded (a remote layer is fetched on first use); 404
/// naming the layers when there is no such layer.
pub async fn find_layer(
    state: &AppState,
    id: &str,
    layer: &str,
) -> Result<geomill_backends::store::LayerRecord, AppError> {
    Ok(find_dataset_layer(state, id, layer).await?.1)
}

/// [`find_layer`] with the dataset it belongs to (as it is once the layer is loaded).
pub async fn find_dataset_layer(
    state: &AppState,
    id: &str,
    layer: &str,
) -> Result<
    (
        geomill_backends::store::DatasetRecord,
        geomill_backends::store::LayerRecord,
    ),
    AppError,
> {
    let missing = |dataset: &geomill_backends::store::DatasetRecord| {
        let known: Vec<&str> = dataset.layers.iter().map(|l| l.name.as_str()).collect();
        AppError::not_found(format!(
            "dataset {id} has no layer {layer:?} (layers: {})",
            known.join(", ")
        ))
    };
    let dataset = find(state, id).await?;
    if !dataset.layers.iter().any(|l| l.name == layer) {
        return Err(missing(&dataset));
    }
    let dataset = remote::ensure_loaded(state, dataset).await?;
    match dataset.layers.iter().find(|l| l.name == layer).cloned() {
        Some(found) => Ok((dataset, found)),
        None => Err(missing(&dataset)),
    }
}
