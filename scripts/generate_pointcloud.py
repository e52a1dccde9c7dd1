"""A seeded lidar-like point cloud written as LAS 1.4 / LAZ (point format 6) with laspy.

`python scripts/generate_pointcloud.py OUT.laz --bounds XMIN YMIN XMAX YMAX --points N
[--seed S] [--epsg CODE]`

Points fall uniformly over the bounds, in chunks of 2,000,000 (memory stays flat at any N). The
ground (class 2) is a smooth relief; buildings (class 6) stand on a lattice of 500-unit blocks
(two in five blocks hold one: a rectangle 60-400 units wide, 20-600 tall); trees (class 5) on
a lattice of 80-unit cells (one in five: a crown of radius 8-35, 5-60 tall) outside buildings.
Heights carry 0.1 of noise; GPS times increase with the point's number; intensity, returns
and the scan angle are drawn too. The same arguments give the same file.
"""

import argparse

import laspy
import numpy as np
import pyproj

CHUNK = 2_000_000
BLOCK, TREE_CELL = 500.0, 80.0


def lattice(rng, cells_x, cells_y, chance, low, high):
    """Per lattice cell: whether it is occupied and a (left, bottom, width, height) fraction."""
    occupied = rng.random((cells_y, cells_x)) < chance
    size = rng.uniform(low, high, (cells_y, cells_x))
    offset = rng.uniform(0.0, 1.0, (2, cells_y, cells_x))
    tall = rng.uniform(0.0, 1.0, (cells_y, cells_x))
    return occupied, size, offset, tall


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--bounds", type=float, nargs=4, required=True)
    parser.add_argument("--points", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--epsg", type=int, default=2263)
    args = parser.parse_args()
    x0, y0, x1, y1 = args.bounds
    rng = np.random.default_rng(args.seed)
    blocks = (int((x1 - x0) // BLOCK) + 1, int((y1 - y0) // BLOCK) + 1)
    trees = (int((x1 - x0) // TREE_CELL) + 1, int((y1 - y0) // TREE_CELL) + 1)
    b_on, b_size, b_offset, b_tall = lattice(rng, *blocks, 0.4, 60.0, 400.0)
    t_on, t_size, t_offset, t_tall = lattice(rng, *trees, 0.2, 8.0, 35.0)

    header = laspy.LasHeader(point_format=6, version="1.4")
    header.scales = np.array([0.01, 0.01, 0.01])
    header.offsets = np.array([np.floor(x0), np.floor(y0), 0.0])
    header.add_crs(pyproj.CRS.from_epsg(args.epsg))
    with laspy.open(args.out, mode="w", header=header) as writer:
        done = 0
        while done < args.points:
            n = min(CHUNK, args.points - done)
            x = rng.uniform(x0, x1, n)
            y = rng.uniform(y0, y1, n)
            ground = 40.0 + 25.0 * np.sin(x / 9000.0) + 15.0 * np.cos(y / 6000.0)
            z = ground + rng.normal(0.0, 0.1, n)
            cls = np.full(n, 2, np.uint8)

            bx = ((x - x0) // BLOCK).astype(np.int64)
            by = ((y - y0) // BLOCK).astype(np.int64)
            width = b_size[by, bx]
            left = x0 + bx * BLOCK + b_offset[0, by, bx] * (BLOCK - width)
            bottom = y0 + by * BLOCK + b_offset[1, by, bx] * (BLOCK - width)
            building = (b_on[by, bx] & (x >= left) & (x < left + width)
                        & (y >= bottom) & (y < bottom + width))
            z[building] += 20.0 + 580.0 * b_tall[by, bx][building]
            cls[building] = 6

            tx = ((x - x0) // TREE_CELL).astype(np.int64)
            ty = ((y - y0) // TREE_CELL).astype(np.int64)
            radius = t_size[ty, tx]
            cx = x0 + (tx + 0.5) * TREE_CELL + (t_offset[0, ty, tx] - 0.5) * (TREE_CELL - 2 * radius)
            cy = y0 + (ty + 0.5) * TREE_CELL + (t_offset[1, ty, tx] - 0.5) * (TREE_CELL - 2 * radius)
            tree = (t_on[ty, tx] & ~building & ((x - cx) ** 2 + (y - cy) ** 2 < radius ** 2))
            z[tree] += 5.0 + 55.0 * t_tall[ty, tx][tree]
            cls[tree] = 5

            points = laspy.ScaleAwarePointRecord.zeros(n, header=header)
            points.x, points.y, points.z = x, y, z
            points.classification = cls
            points.intensity = rng.integers(0, 4096, n, dtype=np.uint16)
            points.return_number = np.ones(n, np.uint8)
            points.number_of_returns = np.ones(n, np.uint8)
            points.scan_angle = rng.integers(-3000, 3001, n, dtype=np.int16)
            points.gps_time = 1.0e5 + (done + np.arange(n)) * 1e-5
            writer.write_points(points)
            done += n


if __name__ == "__main__":
    main()
