
import io, json, sys, warnings
import geopandas as gpd, numpy as np
import libpysal, esda
from reference_cache import remembered
warnings.filterwarnings("ignore")
report, sys.stdout = sys.stdout, io.StringIO()  # libpysal prints a line per island
R_KM = 6371.0088
problems = []

def weights(frame, p, geographic):
    method = p.get("method", "queen")
    if method in ("queen", "rook"):
        cls = libpysal.weights.Queen if method == "queen" else libpysal.weights.Rook
        return cls.from_dataframe(frame, use_index=False, silence_warnings=True)
    c = frame.geometry.centroid
    xy = np.column_stack([c.x.to_numpy(), c.y.to_numpy()])
    radius = R_KM if geographic else None
    scale = 1000.0 if geographic else 1.0  # libpysal's arc distances are in km
    if method == "knn":
        return libpysal.weights.KNN(xy, k=p["k"], radius=radius, silence_warnings=True)
    threshold = p["threshold"] / scale
    if method == "distance_band":
        return libpysal.weights.DistanceBand(xy, threshold=threshold, binary=True,
                                             radius=radius, silence_warnings=True)
    w = libpysal.weights.DistanceBand(xy, threshold=threshold, binary=False,
                                      alpha=-p.get("power", 1.0), radius=radius,
                                      silence_warnings=True)
    if geographic:  # weights of distances in metres, not km
        w = libpysal.weights.W({i: list(w.neighbors[i]) for i in w.neighbors},
                               {i: [v / scale ** p.get("power", 1.0) for v in w.weights[i]]
                                for i in w.weights}, silence_warnings=True)
    return w

def local_statistic(kind, y, w, perms, **options):
    """esda's local statistic; without permutations where esda's own fail (some layers with
    islands): their p-values are then not compared."""
    try:
        return kind(y, w, permutations=perms, seed=1, **options), perms
    except ValueError:
        return kind(y, w, permutations=0, **options), 0

def close(label, name, ours, theirs, rtol=1e-9):
    ours, theirs = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    if ours.shape != theirs.shape:
        problems.append(f"{label}: {name}: {ours.shape} values, PySAL {theirs.shape}")
        return
    good = np.isclose(ours, theirs, rtol=rtol, atol=1e-12, equal_nan=True)
    if not good.all():
        at = int(np.argmin(good))
        problems.append(f"{label}: {name} differs at {(~good).sum()} features, first "
                        f"{at}: {ours[at]!r} vs PySAL {theirs[at]!r}")

def weights_table(source, p, geographic):
    """PySAL's weights of `source` as {(focal, neighbour): weight}, and its islands."""
    w = weights(source, p, geographic)
    if p.get("transform") == "row":
        w.transform = "r"
    pairs = {(i, j): v for i in w.neighbors for j, v in zip(w.neighbors[i], w.weights[i])}
    return pairs, sorted(w.islands)

def pysal_answers(capability, part, y, p, geographic, local_only):
    """Everything a case compares, from PySAL: plain numbers and arrays, kept by
    `reference_cache` (computed once per input)."""
    w = weights(part, p, geographic)
    if capability == "spatial_weights":
        return {"counts": [w.cardinalities[i] for i in range(len(part))]}
    perms = p.get("permutations", 999)
    if capability == "morans_i":
        g = esda.Moran(y, w, permutations=perms)
        answer = {"global": {"global_i": g.I, "global_expected": g.EI,
                             "global_variance": g.VI_norm, "global_z": g.z_norm,
                             "global_p_norm": g.p_norm},
                  "global_p_sim": g.p_sim if perms else None}
        w = weights(part, p, geographic)
        local, perms = local_statistic(esda.Moran_Local, y, w, perms)
        answer.update({"local I": local.Is, "quadrants": list(local.q),
                       "local p_sim": local.p_sim if perms else None,
                       "islands": sorted(w.islands)})
        return answer
    star = p.get("star", True)
    answer = {}
    if not local_only:  # esda's global G builds an n × n matrix
        g = esda.G(y, w, permutations=perms)
        answer["global"] = {"global_g": g.G, "global_expected": g.EG, "global_variance": g.VG,
                            "global_z": g.z_norm, "global_p_norm": g.p_norm}
    # esda's G turns the weights binary in place: the local statistic gets fresh ones.
    w = weights(part, p, geographic)
    local, _ = local_statistic(esda.G_Local, y, w, perms, star=star)
    answer.update({"local G": local.Gs, "local z": local.Zs, "local p_norm": local.p_norm})
    return answer

cases = json.load(open(sys.argv[1]))
for case in cases:
    label = case["label"]
    p = case["params"]
    frame = gpd.read_file(case["path"])
    geographic = case["geographic"]
    if case["capability"] == "spatial_weights" and p.get("as") == "table":
        source = gpd.read_file(case["source"])
        theirs, their_islands = remembered("weights table",
                                           lambda: weights_table(source, p, geographic),
                                           source.geometry, p, geographic)
        ours = {}
        for f, n, v in zip(frame["focal"], frame["neighbor"], frame["weight"]):
            if not np.isnan(n):
                ours[(int(f), int(n))] = v
        if set(ours) != set(theirs):
            problems.append(f"{label}: {len(set(ours) ^ set(theirs))} pairs differ")
        else:
            keys = sorted(theirs)
            close(label, "weights", [ours[k] for k in keys], [theirs[k] for k in keys])
        islands = sorted(int(f) for f, n in zip(frame["focal"], frame["neighbor"]) if np.isnan(n))
        if islands != their_islands:
            problems.append(f"{label}: islands {islands} vs {their_islands}")
        continue
    capability = case["capability"]
    field = p.get("field") if capability != "spatial_weights" else None
    keep = frame.geometry.notna() & ~frame.geometry.is_empty
    if field:
        keep &= frame[field].notna()
    part = frame[keep].reset_index(drop=True)
    y = part[field].to_numpy(dtype=float) if field else None
    local_only = bool(case.get("local_only"))
    theirs = remembered("answers", lambda: pysal_answers(capability, part, y, p, geographic,
                                                         local_only),
                        capability, part.geometry, y, p, geographic, local_only)
    if capability == "spatial_weights":
        close(label, "neighbour counts", part[p.get("field", "neighbors")], theirs["counts"])
        continue
    if capability == "morans_i":
        out = p.get("output", "moran")
        for name, value in theirs["global"].items():
            close(label, name, part[f"{out}_{name}"], np.full(len(part), value))
        if theirs["global_p_sim"] is not None and \
                abs(part[f"{out}_global_p_sim"][0] - theirs["global_p_sim"]) > 0.05:
            problems.append(f"{label}: global p_sim {part[f'{out}_global_p_sim'][0]} vs "
                            f"{theirs['global_p_sim']}")
        close(label, "local I", part[f"{out}_i"], theirs["local I"])
        names = {1: "HH", 2: "LH", 3: "LL", 4: "HL"}
        theirs_q = [names[q] for q in theirs["quadrants"]]
        if list(part[f"{out}_quadrant"]) != theirs_q:
            bad = sum(a != b for a, b in zip(part[f"{out}_quadrant"], theirs_q))
            problems.append(f"{label}: {bad} quadrants differ")
        worst = 0
        if theirs["local p_sim"] is not None:
            islands = set(theirs["islands"])
            sims = [(a, b) for i, (a, b) in enumerate(zip(part[f"{out}_p_sim"],
                                                          theirs["local p_sim"]))
                    if i not in islands]
            worst = max((abs(a - b) for a, b in sims), default=0)
        if worst > 0.12:
            problems.append(f"{label}: local p_sim differs by up to {worst}")
    else:
        out = p.get("output", "gi")
        for name, value in theirs.get("global", {}).items():
            close(label, name, part[f"{out}_{name}"], np.full(len(part), value))
        close(label, "local G", part[f"{out}_g"], theirs["local G"])
        close(label, "local z", part[f"{out}_z"], theirs["local z"])
        close(label, "local p_norm", part[f"{out}_p_norm"], theirs["local p_norm"])
print("\n".join(problems) or f"compared {len(cases)} cases", file=report)
