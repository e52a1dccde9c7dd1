//! Layer styles: one model (a single symbol, categories or graduated ranges, a label), stored
//! per layer as JSON, written as the QML QGIS reads and read back from the QML QGIS writes.

pub mod maplibre;
pub mod model;
pub mod qml_read;
pub mod qml_write;
pub mod result_style;
pub mod stored;

pub use model::{Category, Label, Range, Renderer, Style, SymbolStyle};
