"""The open-loop generators side by side (issue 28's validation and benchmark), in one sitting, interleaved.

Every generator runs in the loadgen image on core 0 (oha, not in the image, is
bind-mounted from a local `cargo install oha --version 1.10.0`; pass its path
as OHA or it is left out). Three checks:

1. ceiling: the highest constant rate each open-loop generator holds (>= 99%
   of the asked rate answered 2xx in a 10 s window) against
   benchmarks/responder (a C epoll responder on core 1, so that the generator
   runs out of core first), beside wrk's closed-loop throughput on the same
   core (100 connections, and pipelined 16 deep);
2. floor: p50 and p99 latency at 1% of go-nethttp's closed-loop capacity;
3. omission: go-nethttp at a known rate, stopped (SIGSTOP) for 100 ms in the
   middle of a 10 s window, then continued: about rate x 0.1 s requests
   should be late, their latencies spread from ~0 to ~100 ms.

    OHA=/work/oha/bin/oha .venv/bin/python benchmarks/open_loop_generators.py [out.json]

Environment: GENERATORS (openloop,vegeta,oha), CHECKS (ceiling,floor,omission), RATES (the ceiling's
ladder, req/s). The loadgen image is built first (`loadlab build --loadgen` or any trial).

Nothing else may run meanwhile. Prints a table per check and writes every
measurement to out.json (default /tmp/open-loop-generators.json).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import docker
import numpy as np

from loadlab.harness import container
from loadlab.loadgen import vegeta
from loadlab.stats.latency import hdr_value_counts, percentiles_from_counts
from loadlab.servers import loadgen_image

HERE = Path(__file__).resolve().parent
WINDOW_S = 10
HELD = 0.99
OPEN_LOOP = ("openloop", "vegeta", "oha")
CONNECTIONS = 200


def start_loadgen(client, oha: str | None):
    volumes = {oha: {"bind": "/usr/local/bin/oha", "mode": "ro"}} if oha else {}
    return client.containers.run(loadgen_image(), ["sleep", "infinity"], detach=True, network_mode="host",
                                 cpuset_cpus="0", volumes=volumes, name=f"loadlab-bench-gen-{os.getpid()}",
                                 user="0:0", working_dir="/tmp")


def cgroup_cpu_s(handle) -> float:
    path = Path(f"/sys/fs/cgroup/cpuacct/docker/{handle.id}/cpuacct.usage")
    return int(path.read_text()) / 1e9 if path.exists() else float("nan")


def run_in(loadgen, argv: list[str], timeout_s: float) -> tuple[str, float]:
    """(stdout+stderr, the container's CPU seconds spent) of one command in the loadgen."""
    before = cgroup_cpu_s(loadgen)
    result = loadgen.exec_run(["timeout", "--signal=KILL", f"{timeout_s:.0f}", *argv], demux=True)
    after = cgroup_cpu_s(loadgen)
    stdout, stderr = result.output
    return (stdout or b"").decode(errors="replace") + "\n" + (stderr or b"").decode(errors="replace"), after - before


def open_loop(loadgen, generator: str, url: str, rate: float, duration_s: int = WINDOW_S,
              connections: int = CONNECTIONS) -> dict:
    """One window: rate asked, answered 2xx per second, latencies (µs) the generator reports, CPU."""
    if generator == "openloop":
        out, cpu = run_in(loadgen, ["openloop", "--url", url, "--rate", str(rate), "--duration", str(duration_s),
                                    "--connections", str(connections), "--timeout", "5", "--report", "/tmp/o.json"],
                          duration_s + 30)
        report = json.loads(loadgen.exec_run(["cat", "/tmp/o.json"]).output)
        return {"ok_rps": report["ok"] / duration_s, "sent_rps": report["dispatched_rate_rps"],
                "latency_counts_us": hdr_value_counts(report["latency_histogram_hdr"]), "cpu_share": cpu / duration_s,
                "self_busy": report["cpu_busy_share"], "own_delay_p99_us": report["generator_delay_us"]["p99"],
                "late_own_share": report["late_generator"] / max(1, report["dispatched"]),
                "late": report["late"], "unsent": report["unsent"]}
    if generator == "vegeta":
        out, cpu = run_in(loadgen, vegeta.attack_command(url, rate, duration_s, 5, connections, "/tmp/v"),
                          duration_s + 60)
        results = vegeta.read_results_csv(_copy_out(loadgen, "/tmp/v/" + vegeta.RESULTS_CSV_GZ))
        ok = results[(results["status"] >= 200) & (results["status"] < 400)]
        return {"ok_rps": len(ok) / duration_s, "sent_rps": len(results) / duration_s,
                "latency_counts_us": np.unique(results["latency_s"].to_numpy() * 1e6, return_counts=True),
                "cpu_share": cpu / duration_s}
    out, cpu = run_in(loadgen, ["oha", "-z", f"{duration_s}s", "-q", str(rate), "-c", str(connections),
                                "--latency-correction", "--no-tui", "--output-format", "json", url], duration_s + 30)
    document = json.loads(out[out.index("{"):out.rindex("}") + 1])
    codes = document.get("statusCodeDistribution") or {}
    ok = sum(n for code, n in codes.items() if 200 <= int(code) < 400)
    percentiles = document.get("latencyPercentiles") or {}
    return {"ok_rps": ok / duration_s, "sent_rps": document["summary"]["requestsPerSec"],
            "latency_percentiles_us": {k: (v or 0) * 1e6 for k, v in percentiles.items()},
            "latency_max_us": (document["summary"].get("slowest") or 0) * 1e6, "cpu_share": cpu / duration_s}


def _copy_out(loadgen, path: str) -> Path:
    import io
    import tarfile
    stream, _ = loadgen.get_archive(path)
    archive = tarfile.open(fileobj=io.BytesIO(b"".join(stream)))
    target = Path("/tmp") / f"bench-{os.getpid()}-{Path(path).name}"
    target.write_bytes(archive.extractfile(archive.getmembers()[0]).read())
    return target


def summary(measure: dict) -> dict:
    """p50, p99, p99.9, max (µs; loadlab's one percentile definition) and the counts above 10 and 50 ms."""
    if "latency_counts_us" in measure:
        values, counts = measure.pop("latency_counts_us")
        p50, p99, p99_9 = percentiles_from_counts(values, counts, [50, 99, 99.9]) if counts.size else [None] * 3
        measure.update({"p50_us": p50, "p99_us": p99, "p99_9_us": p99_9,
                        "max_us": float(values[-1]) if counts.size else None,
                        "above_10ms": int(counts[values > 10_000].sum()), "above_50ms": int(counts[values > 50_000].sum())})
    else:
        percentiles = measure.pop("latency_percentiles_us")
        measure.update({"p50_us": percentiles.get("p50"), "p99_us": percentiles.get("p99"),
                        "p99_9_us": percentiles.get("p99.9"), "max_us": measure.pop("latency_max_us")})
    return measure


def wrk_throughput(loadgen, url: str, connections: int, pipeline: int) -> dict:
    argv = ["wrk", "-t1", f"-c{connections}", f"-d{WINDOW_S}s", url]
    if pipeline > 1:
        argv[1:1] = ["-s", "/opt/loadlab/pipeline.lua"]
    out, cpu = run_in(loadgen, argv if pipeline == 1 else ["env", f"PIPELINE_DEPTH={pipeline}", *argv], WINDOW_S + 30)
    line = next(line for line in out.splitlines() if line.startswith("Requests/sec"))
    return {"rps": float(line.split()[1]), "cpu_share": cpu / WINDOW_S}


def ceilings(loadgen, port: int, generators, rates, out: list) -> None:
    url = f"http://127.0.0.1:{port}/plaintext"
    for repetition in (1, 2):
        for pipeline in (1, 16) if "wrk" in os.environ.get("CEILING_TOOLS", "wrk") else ():
            measure = wrk_throughput(loadgen, url, 100, pipeline)
            out.append({"check": "ceiling", "generator": f"wrk (closed, pipeline {pipeline})", "rep": repetition, **measure})
            print(out[-1], flush=True)
        for rate in rates:
            order = list(generators)
            random.shuffle(order)
            for generator in order:
                measure = summary(open_loop(loadgen, generator, url, rate))
                measure.update({"check": "ceiling", "generator": generator, "rep": repetition, "rate": rate,
                                "held": measure["ok_rps"] >= HELD * rate})
                out.append(measure)
                print({k: v for k, v in measure.items()}, flush=True)


def floor_and_omission(client, loadgen, generators, out: list, checks=("floor", "omission")) -> None:
    port = container.free_port()
    server = client.containers.run("loadlab/go-nethttp:latest", detach=True, network_mode="host", cpuset_cpus="1",
                                   environment={"HOST": "127.0.0.1", "PORT": str(port)},
                                   name=f"loadlab-bench-go-{os.getpid()}")
    try:
        time.sleep(1.0)
        url = f"http://127.0.0.1:{port}/plaintext"
        capacity = wrk_throughput(loadgen, url, 16, 1)["rps"]
        out.append({"check": "capacity", "server": "go-nethttp", "rps": capacity})
        print(out[-1], flush=True)
        server.reload()
        pid = server.attrs["State"]["Pid"]
        for repetition in (1, 2, 3) if "floor" in checks else ():
            for generator in random.sample(list(generators), len(generators)):
                measure = summary(open_loop(loadgen, generator, url, round(capacity * 0.01)))
                out.append({"check": "floor", "generator": generator, "rep": repetition,
                            "rate": round(capacity * 0.01), **measure})
                print(out[-1], flush=True)
        rate = 2000
        if "omission" not in checks:
            return
        # With 200 connections every request due in the stop finds one free, so even a generator that times
        # from its own send sees the stop; with 20 it does not, unless it counts from the intended time.
        for connections in (200, 20):
            for repetition in (1, 2):
                for generator in random.sample(list(generators), len(generators)):
                    stopped = {}

                    def stop_for_100ms():
                        time.sleep(WINDOW_S / 2)
                        started = time.monotonic()
                        os.kill(pid, signal.SIGSTOP)
                        time.sleep(0.1)
                        os.kill(pid, signal.SIGCONT)
                        stopped["s"] = time.monotonic() - started

                    stopper = threading.Thread(target=stop_for_100ms)
                    stopper.start()
                    measure = summary(open_loop(loadgen, generator, url, rate, connections=connections))
                    stopper.join()
                    out.append({"check": "omission", "generator": generator, "rep": repetition, "rate": rate,
                                "connections": connections, "stopped_s": stopped["s"],
                                "expected_late": rate * stopped["s"], **measure})
                    print(out[-1], flush=True)
    finally:
        server.remove(force=True)


def main(path: str = "/tmp/open-loop-generators.json") -> int:
    random.seed(28)
    client = docker.from_env()
    oha = os.environ.get("OHA")
    generators = tuple(g for g in os.environ.get("GENERATORS", ",".join(OPEN_LOOP)).split(",") if g != "oha" or oha)
    checks = os.environ.get("CHECKS", "ceiling,floor,omission").split(",")
    responder = Path("/tmp/loadlab-responder")
    subprocess.run(["cc", "-O2", "-o", str(responder), str(HERE / "responder" / "responder.c")], check=True)
    port = container.free_port()
    process = subprocess.Popen(["taskset", "-c", "1", str(responder), str(port)])
    loadgen = start_loadgen(client, oha)
    out: list[dict] = []
    try:
        time.sleep(0.5)
        rates = [float(r) for r in os.environ.get("RATES", "10000,20000,30000,40000,45000,50000,55000,60000").split(",")]
        if "ceiling" in checks:
            ceilings(loadgen, port, generators, rates, out)
        process.terminate()
        if "floor" in checks or "omission" in checks:
            floor_and_omission(client, loadgen, generators, out, checks)
    finally:
        process.kill()
        loadgen.remove(force=True)
        Path(path).write_text(json.dumps(out, indent=1, default=float))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
