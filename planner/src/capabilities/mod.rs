//! The capability registry: one file per capability (params struct with its JSON Schema, user
//! documentation, group, tier, lowering), assembled in [`all_capabilities`].

pub mod common;
pub mod registry;

pub use common::{CommonParams, Group, LowerContext, OnEmpty, Tier};
pub use registry::{Capability, CapabilityParams, Registered, all_capabilities, find, suggest};

mod add_field;
mod area_length;
mod buffer;
mod calculate;
mod case_when;
mod cast_field;
mod centroid;
pub mod checks;
pub mod invalid;
mod listing;
pub use listing::{CapabilityInfo, listing};
mod clip;
mod coalesce_fields;
mod convex_hull;
mod deduplicate;
mod dissolve;
mod drop_field;
mod erase;
mod export;
mod filter;
mod intersects;
mod merge_layers;
mod nearest_neighbor;
mod overlay_intersection;
mod random_sample;
mod rename_field;
mod reproject;
mod simplify;
mod sort;
mod spatial_aggregate;
mod spatial_join;
mod top_n;
mod union;
