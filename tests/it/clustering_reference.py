"""The clustering capabilities' reference: scikit-learn on the coordinates of our result files.

argv[1] is a manifest, a list of cases: `kind` (kmeans, dbscan or hdbscan), `engine`, `path`
(our result file, whose `cluster` column is compared) and the capability's parameters (`init`,
`eps`, `unit`, `min_samples`, `min_cluster_size`, `metric`). Prints one line per problem, or
how many cases were compared. scikit-learn's labels are computed once per set of points and
parameters (`reference_cache`).

HDBSCAN is scikit-learn's own pipeline (`_hdbscan_prims`, `tree_to_labels`) with the tie rules
geomill documents (native/src/hdbscan/mod.rs), which give the same labels on every CPU:
equal spanning-tree weights keep Prim's order (`np.argsort(kind="stable")`), and a core
distance is the metric's own distance to the `min_samples`-th neighbour. `HDBSCAN().fit` sorts
with a plain `np.argsort`, whose tie order differs between NumPy's AVX-512, AVX2 and baseline
code, and converts haversine core distances with NumPy's arcsine (SVML on AVX-512): its labels
change from CPU to CPU where equal weights meet. Run with `NPY_DISABLE_CPU_FEATURES` to see
that these do not.
"""
import json, sys, warnings
import geopandas as gpd, numpy as np
from sklearn.cluster import DBSCAN, KMeans
from sklearn.cluster._hdbscan._linkage import make_single_linkage, mst_from_data_matrix
from sklearn.cluster._hdbscan._tree import tree_to_labels
from sklearn.metrics import DistanceMetric
from sklearn.neighbors import NearestNeighbors

from reference_cache import remembered

warnings.filterwarnings("ignore")
R = 6371008.8


def hdbscan_labels(X, metric, min_cluster_size, min_samples=None):
    """scikit-learn's HDBSCAN (alpha 1, excess of mass, no single cluster) with the tie rules
    above."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    min_samples = min_samples or min_cluster_size
    distance = DistanceMetric.get_metric(metric)
    search = NearestNeighbors(n_neighbors=min_samples, metric=metric,
                              algorithm="kd_tree" if metric == "euclidean" else "ball_tree")
    _, neighbours = search.fit(X).kneighbors(X, min_samples)
    far = X[neighbours[:, -1]]
    core = np.array([distance.pairwise(X[i:i + 1], far[i:i + 1])[0, 0] for i in range(len(X))])
    tree = mst_from_data_matrix(X, core, distance, 1.0)
    tree = tree[np.argsort(tree["distance"], kind="stable")]
    labels, _ = tree_to_labels(make_single_linkage(tree), min_cluster_size, "eom", False, 0.0,
                               None)
    return labels


def labels_of(xy, case):
    """scikit-learn's labels of the points `xy` (longitude and latitude, or planar) for a case."""
    if case["kind"] == "kmeans" and case.get("method") == "scikit_learn":
        return KMeans(n_clusters=case["k"], random_state=case["seed"], n_init="auto").fit(xy)
    if case["kind"] == "kmeans":
        init = np.array(case["init"], dtype="float64")
        return KMeans(n_clusters=len(init), init=init, n_init=1, algorithm="lloyd",
                      max_iter=300, tol=0).fit(xy).labels_
    if case["kind"] == "hdbscan":
        # Longitude/latitude points are measured on the sphere (scikit-learn's haversine reads
        # radians, latitude first) unless the case says planar.
        planar = case.get("metric") == "euclidean"
        return hdbscan_labels(xy if planar else np.radians(xy[:, ::-1]),
                              "euclidean" if planar else "haversine",
                              case["min_cluster_size"], case.get("min_samples"))
    if case.get("unit") == "meters":
        radians = np.radians(xy[:, ::-1])
        return DBSCAN(eps=case["eps"] / R, min_samples=case["min_samples"],
                      metric="haversine").fit(radians).labels_
    dx = xy[:, 0][:, None] - xy[:, 0][None, :]
    dy = xy[:, 1][:, None] - xy[:, 1][None, :]
    distances = np.sqrt(dx * dx + dy * dy)
    return DBSCAN(eps=case["eps"], min_samples=case["min_samples"],
                  metric="precomputed").fit(distances).labels_


problems = []
cases = json.load(open(sys.argv[1]))
for case in cases:
    frame = gpd.read_file(case["path"])
    xy = np.column_stack([frame.geometry.x.to_numpy(), frame.geometry.y.to_numpy()])
    ours = frame["cluster"].to_numpy()
    label = f'{case["engine"]} {case["kind"]} {case.get("k", "")}'
    parameters = {k: case.get(k) for k in ("kind", "init", "eps", "unit", "min_samples",
                                            "min_cluster_size", "metric")}
    if case.get("method") == "scikit_learn":
        fitted = labels_of(xy, case)
        theirs = fitted.labels_
        distances = np.linalg.norm(xy - fitted.cluster_centers_[theirs], axis=1)
        if not np.allclose(frame["dist"].to_numpy(), distances, rtol=1e-9, atol=1e-9):
            problems.append(f"{label} scikit_learn: distances differ")
    else:
        theirs = remembered("labels", lambda: labels_of(xy, case), xy, parameters)
    if not np.array_equal(ours, theirs):
        bad = int(np.sum(ours != theirs))
        problems.append(f"{label} {case.get('min_cluster_size', '')}: {bad} of {len(ours)} "
                        f"features in another cluster: ours {np.bincount(ours + 1).tolist()}, "
                        f"theirs {np.bincount(theirs + 1).tolist()}")
print("\n".join(problems) or f"compared {len(cases)} cases")
