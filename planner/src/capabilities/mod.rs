//! The capability registry: one file per capability (params struct with its JSON Schema, user
//! documentation, group, tier, lowering), assembled in [`all_capabilities`].

pub mod common;
pub mod registry;

pub use common::{CommonParams, Group, LowerContext, OnEmpty, Tier, replace_geometry};
pub use registry::{Capability, CapabilityParams, Registered, all_capabilities, find, suggest};

pub mod checks;
mod cleaning_checks;
mod explode_common;
pub mod invalid;
mod listing;
mod network_graph;
mod overlay_pair;
mod raster_common;
mod ring_layer;
mod validation_key;
pub mod weights;
pub mod work_crs;
pub use listing::{CapabilityInfo, listing};
pub use temporal_filter::parse_iso_time;

/// Declares each capability's module and registers its params type: adding a capability is
/// its file and one line here.
macro_rules! capabilities {
    ($($module:ident :: $params:ident),* $(,)?) => {
        $(mod $module;)*

        /// One registration per capability, in declaration order.
        fn registered() -> Vec<Box<dyn Capability>> {
            vec![$(Box::new(Registered::<$module::$params>::new())),*]
        }
    };
}

capabilities! {
    overlay_union::OverlayUnion,
    symmetric_difference::SymmetricDifference,
    multipart_to_singleparts::MultipartToSingleparts,
    singleparts_to_multipart::SinglepartsToMultipart,
    vector_diff::VectorDiff,
    od_matrix::OdMatrix,
    shortest_path::ShortestPath,
    isochrone::Isochrone,
    network_allocation::NetworkAllocation,
    connectivity_check::ConnectivityCheck,
    connected_components::ConnectedComponents,
    build_network_graph::BuildNetworkGraph,
    planarize::Planarize,
    snap_points_to_lines::SnapPointsToLines,
    split_lines_at_points::SplitLinesAtPoints,
    mst::Mst,
    steiner_tree::SteinerTree,
    community_detection::CommunityDetection,
    topology_check::TopologyCheck,
    duplicate_geometry::DuplicateGeometry,
    attribute_validation::AttributeValidation,
    completeness_check::CompletenessCheck,
    extract_vertices::ExtractVertices,
    extract_segments::ExtractSegments,
    extract_holes::ExtractHoles,
    voronoi_polygons::VoronoiPolygons,
    delaunay_triangulation::DelaunayTriangulation,
    polygonize::Polygonize,
    polygon_fix_gaps::PolygonFixGaps,
    polygon_fix_overlaps::PolygonFixOverlaps,
    polygon_remove_slivers::PolygonRemoveSlivers,
    polygon_snap_borders::PolygonSnapBorders,
    network_snap_endpoints::NetworkSnapEndpoints,
    network_node_lines::NetworkNodeLines,
    network_remove_pseudo_nodes::NetworkRemovePseudoNodes,
    network_extend_dangles::NetworkExtendDangles,
    network_remove_duplicates::NetworkRemoveDuplicates,
    concave_hull::ConcaveHull,
    alpha_shape::AlphaShape,
    oriented_bbox::OrientedBbox,
    offset_curve::OffsetCurve,
    min_bounding_circle::MinBoundingCircle,
    densify_vertices::DensifyVertices,
    chaikin_smooth::ChaikinSmooth,
    assign_projection::AssignProjection,
    add_field::AddField,
    add_m::AddM,
    add_z::AddZ,
    affine_transform::AffineTransform,
    attribute_join::AttributeJoin,
    area_length::AreaLength,
    boundary::Boundary,
    buffer::Buffer,
    calculate::Calculate,
    case_when::CaseWhen,
    bivariate_choropleth::BivariateChoropleth,
    cast_field::CastField,
    centroid::Centroid,
    choropleth::Choropleth,
    classify::Classify,
    classify_categorical::ClassifyCategorical,
    classify_by_ring::ClassifyByRing,
    cluster_dbscan::ClusterDbscan,
    cluster_st_dbscan::ClusterStDbscan,
    cluster_network_dbscan::ClusterNetworkDbscan,
    cluster_hdbscan::ClusterHdbscan,
    cluster_kmeans::ClusterKmeans,
    clip::Clip,
    coalesce_fields::CoalesceFields,
    continuous_ramp::ContinuousRamp,
    convex_hull::ConvexHull,
    deduplicate::Deduplicate,
    describe::Describe,
    dissolve::Dissolve,
    drop_field::DropField,
    drop_m::DropM,
    drop_z::DropZ,
    envelope::Envelope,
    erase::Erase,
    export::Export,
    filter::Filter,
    force_geometry_type::ForceGeometryType,
    getis_ord_g::GetisOrdG,
    graduated_size::GraduatedSize,
    grid_create::GridCreate,
    hexgrid_create::HexgridCreate,
    head_tail_breaks::HeadTailBreaks,
    intersects::Intersects,
    kde_heatmap::KdeHeatmap,
    line_merge::LineMerge,
    line_substring::LineSubstring,
    line_locate_point::LineLocatePoint,
    lookup_table::LookupTable,
    make_valid::MakeValid,
    merge_layers::MergeLayers,
    morans_i::MoransI,
    nearest_neighbor::NearestNeighbor,
    normalize::Normalize,
    overlay_intersection::OverlayIntersection,
    pivot::Pivot,
    pointcloud_filter_classification::PointcloudFilterClassification,
    pointcloud_grid_summary::PointcloudGridSummary,
    pointcloud_load_las::PointcloudLoadLas,
    pointcloud_zonal_height::PointcloudZonalHeight,
    random_sample::RandomSample,
    rename_field::RenameField,
    select_columns::SelectColumns,
    reproject::Reproject,
    reverse_lines::ReverseLines,
    simplify::Simplify,
    snap_to_grid::SnapToGrid,
    sort::Sort,
    spatial_weights::SpatialWeights,
    spatial_aggregate::SpatialAggregate,
    spatial_join::SpatialJoin,
    swap_xy::SwapXy,
    temporal_filter::TemporalFilter,
    temporal_join::TemporalJoin,
    top_n::TopN,
    union::Union,
    unpivot::Unpivot,
    zonal_stats::ZonalStats,
    raster_clip::RasterClip,
    raster_reproject::RasterReproject,
    raster_merge::RasterMerge,
    ndvi::Ndvi,
    change_detection::ChangeDetection,
}
