//! One example dataset as the app's state keeps it, and the id it is known by.

use std::path::Path;

/// One example: its stable id, the file it comes from, and the dataset holding its layers.
#[derive(Debug, Clone)]
pub struct Example {
    /// The file name without its extension, lower case, characters other than letters,
    /// digits, `-` and `_` replaced by `-`.
    pub id: String,
    /// The file's name in the examples folder.
    pub file: String,
    /// The dataset its layers were loaded into.
    pub dataset_id: String,
}

/// The id of an example read from `file_name`.
pub fn example_id(file_name: &str) -> String {
    let stem = Path::new(file_name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    stem.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}
