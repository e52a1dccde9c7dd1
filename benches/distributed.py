"""The distributed engine's overhead, measured in one run (`make bench-distributed`).

`python benches/distributed.py GEOMILL_BINARY [--points N] [--runs R]`: real-shaped regions and N
points from `benches/real_layers.py`, uploaded to a server of GEOMILL_BINARY (the upload path);
the W1-style aggregate (count, sum, max of the points within each region) run R times over HTTP
on the native engine and on the distributed engine with a cluster of 1 and of 2 executors (the
same binary's `scheduler` and `executor` processes on this machine, task slots shared so that
each configuration has the machine's cores); and SedonaDB 0.5's spatial join + aggregate of the
same files (installed in a venv of its own on first use, with pyarrow and geoarrow-pyarrow). Prints the medians and the ratios to
native. Answers are compared (the counts of the runs must be equal) before anything is timed.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(url, body=None, content_type="application/json"):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method="POST" if data else "GET")
    if data:
        req.add_header("content-type", content_type)
    with urllib.request.urlopen(req, timeout=600) as response:
        return json.loads(response.read() or b"null")


def upload(base, path):
    boundary = "geomillbench"
    name = os.path.basename(path)
    with open(path, "rb") as f:
        content = f.read()
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            f"Content-Type: application/octet-stream\r\n\r\n").encode() + content + f"\r\n--{boundary}--\r\n".encode()
    return request(f"{base}/datasets/upload", body, f"multipart/form-data; boundary={boundary}")


class Cluster:
    """A scheduler and `executors` executors of the binary, `slots` task slots each."""

    def __init__(self, binary, executors, slots, shared, work):
        self.port = free_port()
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        self.processes = [subprocess.Popen(
            [binary, "scheduler", "--bind", f"127.0.0.1:{self.port}"], **quiet)]
        for n in range(executors):
            self.processes.append(subprocess.Popen(
                [binary, "executor", "--scheduler", f"127.0.0.1:{self.port}",
                 "--flight-port", str(free_port()), "--grpc-port", str(free_port()),
                 "--slots", str(slots), "--memory-mib", "1024",
                 "--work-dir", os.path.join(work, f"executor-{n}"), "--shared-dir", shared], **quiet))
        for _ in range(600):
            try:
                if len(request(f"http://127.0.0.1:{self.port}/api/executors")) >= executors:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("the executors did not register")

    def stop(self):
        for p in self.processes:
            p.kill()
            p.wait()


class Server:
    def __init__(self, binary, data_dir, env):
        port = free_port()
        environment = dict(os.environ, GEOMILL_BIND="127.0.0.1", GEOMILL_PORT=str(port),
                           GEOMILL_DATA_DIR=data_dir, GEOMILL_TIER="enterprise",
                           GEOMILL_RATE_LIMIT="0", GEOMILL_RATE_LIMIT_READS="0", **env)
        self.process = subprocess.Popen([binary, "serve"], env=environment,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                request(f"{self.base}/health")
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the server did not start")

    def stop(self):
        self.process.kill()
        self.process.wait()


def pipeline(points_id):
    return {"name": "w1", "steps": [
        {"id": "counted", "capability": "spatial_aggregate", "input": "regions",
         "params": {"ref_layer": points_id, "predicate": "within",
                    "agg": {"*": "count", "value": "sum", "id": "max"}}}]}


def timed_runs(base, dataset, document, engine, runs):
    body = {"dataset_id": dataset, "pipeline": document, "engine": engine}
    answer = request(f"{base}/api/pipelines/execute", body)  # warm-up, and the answer
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        request(f"{base}/api/pipelines/execute", body)
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), answer


def counts(result_path):
    import geopandas as gpd
    return [int(c) for c in gpd.read_file(result_path)["count"]]


SEDONA = r"""
import sys, time, statistics, json, warnings
warnings.simplefilter("ignore")  # PROJ and GDAL are not needed here
import sedonadb
regions_parquet, points, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
query = '''SELECT r.rid, count(p.geometry) AS n, sum(p.value) AS s, max(p.id) AS m
           FROM regions r LEFT JOIN points p ON ST_Within(p.geometry, r.geometry)
           GROUP BY r.rid ORDER BY r.rid'''
def run():
    sd = sedonadb.connect()
    sd.read_parquet(regions_parquet).to_view("regions")
    sd.read_parquet(points).to_view("points")
    return sd.sql(query).to_arrow_table()
answer = run()
seconds = []
for _ in range(runs):
    start = time.perf_counter(); run(); seconds.append(time.perf_counter() - start)
print(json.dumps({"median": statistics.median(seconds), "matched": sum(answer.column("n").to_pylist())}))
"""


def sedona_python():
    """A Python with SedonaDB 0.5 (a venv beside the tests' environment, made once)."""
    deps = os.environ.get("GEOMILL_DEPS_DIR", os.path.expanduser("~/.cache/geomill/deps"))
    venv = os.path.join(deps, "sedonadb-0.5")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "sedonadb==0.5.0", "pyarrow", "geoarrow-pyarrow"], check=True)
    return python


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    cores = os.cpu_count() or 2
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([sys.executable, os.path.join(HERE, "real_layers.py"), work,
                        "--points", str(args.points), "--cell", "10"], check=True,
                       stdout=subprocess.DEVNULL)
        regions, points = os.path.join(work, "regions.gpkg"), os.path.join(work, "points.parquet")
        shared = os.path.join(work, "shared")
        os.makedirs(shared)
        rows = []
        reference = None
        for executors in (1, 2):
            cluster = Cluster(binary, executors, max(1, cores // executors), shared, work)
            server = Server(binary, os.path.join(work, f"data-{executors}"),
                            {"GEOMILL_BALLISTA_URL": f"df://127.0.0.1:{cluster.port}",
                             "GEOMILL_DISTRIBUTED_DIR": shared})
            try:
                dataset = upload(server.base, regions)["id"]
                document = pipeline(upload(server.base, points)["id"])
                if reference is None:
                    native, answer = timed_runs(server.base, dataset, document, "native", args.runs)
                    reference = counts(answer["result_path"])
                    rows.append(("geomill native (HTTP, layers stored)", native))
                seconds, answer = timed_runs(server.base, dataset, document, "distributed", args.runs)
                assert counts(answer["result_path"]) == reference, "the answers differ"
                rows.append((f"geomill distributed, {executors} executor(s) x {max(1, cores // executors)} slot(s)", seconds))
            finally:
                server.stop()
                cluster.stop()
        import geopandas as gpd
        frame = gpd.read_file(regions)
        frame["rid"] = range(len(frame))
        regions_parquet = os.path.join(work, "regions.parquet")
        frame[["rid", "geometry"]].to_parquet(regions_parquet)
        sedona = json.loads(subprocess.run(
            [sedona_python(), "-c", SEDONA, regions_parquet, points, str(args.runs)],
            check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
        rows.append(("SedonaDB 0.5 (files read, join, aggregate)", sedona["median"]))
        native = rows[0][1]
        print(f"{args.points:,} points x {len(reference)} real-shaped regions, median of {args.runs}, "
              f"{cores} cores; matched points: geomill {sum(reference):,}, SedonaDB {sedona['matched']:,}")
        print(f"| {'what':<58} | median (s) | ratio to native |")
        print(f"|{'-' * 60}|-----------:|----------------:|")
        for label, seconds in rows:
            print(f"| {label:<58} | {seconds:10.2f} | {seconds / native:15.2f} |")


if __name__ == "__main__":
    main()
