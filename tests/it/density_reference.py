
import json, sys, warnings
import geopandas as gpd, numpy as np
from sklearn.neighbors import KernelDensity
warnings.filterwarnings("ignore")
problems = []
cases = json.load(open(sys.argv[1]))
for case in cases:
    label, p = case["label"], case["params"]
    ours = gpd.read_file(case["path"])
    points = gpd.read_file(case["source"])
    points = points[points.geometry.notna()]
    xy = np.column_stack([points.geometry.x, points.geometry.y])
    weight = (np.nan_to_num(points[p["weight"]].to_numpy(dtype=float))
              if p.get("weight") else np.ones(len(xy)))
    h = p["bandwidth"]
    full = len(ours)
    if full > 1000:  # a seeded sample of the cells of a large grid
        ours = ours.iloc[np.random.default_rng(1).choice(full, 1000, replace=False)]
    centres = np.column_stack([ours.geometry.centroid.x, ours.geometry.centroid.y])
    if p["kernel"] == "quartic":
        theirs = np.zeros(len(centres))
        for start in range(0, len(xy), 20000):
            d2 = ((centres[:, None, :] - xy[None, start:start + 20000, :]) ** 2).sum(axis=2) / (h * h)
            theirs += (np.where(d2 < 1, 3 / np.pi * (1 - d2) ** 2, 0)
                       * weight[None, start:start + 20000]).sum(axis=1) / (h * h)
    else:
        kde = KernelDensity(bandwidth=h, kernel=p["kernel"]).fit(xy, sample_weight=weight)
        theirs = weight.sum() * np.exp(kde.score_samples(centres))
    if not np.allclose(ours["density"], theirs, rtol=1e-9, atol=1e-15):
        worst = np.max(np.abs(ours["density"] - theirs) / np.maximum(theirs, 1e-300))
        problems.append(f"{label}: densities differ by up to {worst:.2e} (relative)")
    if full == len(ours) and (theirs > 0).sum() > len(ours) and p["kernel"] != "gaussian":
        problems.append(f"{label}: cells with density were dropped")
print("\n".join(problems) or f"compared {len(cases)} cases")
