"""Benchmark (not a test): does `loadlab trial` cost throughput against plain wrk?

Alternates, in one sitting, a `loadlab trial` and a plain `wrk` run from a
shell-started loadgen container against a go-nethttp container started the
same way (host network, pinned: server on CPU 1, wrk on CPU 0, -t1 -c64,
same route and durations). Prints each pair and the ratio of medians.

    .venv/bin/python benchmarks/bench_harness_overhead.py --pairs 5
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time

from loadlab import servers
from loadlab.config import new_run_id
from loadlab.harness import container, engine, images


def plain_wrk(client, route: str, connections: int, duration_s: int, warmup_s: int) -> float:
    """A server container and wrk as one would start them by hand; returns req/s."""
    run_id = new_run_id("bench")
    port = container.free_port()
    server = client.containers.run(
        servers.get_server("go-nethttp").image(), detach=True, network_mode="host", cpuset_cpus="1",
        environment={"HOST": "127.0.0.1", "PORT": str(port)}, labels={container.RUN_LABEL: run_id}, name=f"{run_id}-srv",
    )
    try:
        container.wait_healthy(server, f"http://127.0.0.1:{port}/health", 30)
        base = ["docker", "run", "--rm", "--network", "host", "--cpuset-cpus", "0", "--label", f"{container.RUN_LABEL}={run_id}",
                servers.loadgen_image(), "wrk", "-t1", f"-c{connections}"]
        url = f"http://127.0.0.1:{port}{route}"
        subprocess.run(base + [f"-d{warmup_s}s", url], capture_output=True, check=True)
        output = subprocess.run(base + [f"-d{duration_s}s", url], capture_output=True, text=True, check=True).stdout
        return float(re.search(r"Requests/sec:\s+([0-9.]+)", output).group(1))
    finally:
        container.clean(client, run_id)


def loadlab_trial(route: str, connections: int, duration_s: int, warmup_s: int) -> float:
    result = subprocess.run(
        [sys.executable, "-m", "loadlab.cli", "trial", "--server", "go-nethttp", "--route", route,
         "--connections", str(connections), "--duration", f"{duration_s}s", "--warmup", f"{warmup_s}s", "--json"],
        capture_output=True, text=True, check=True,
    )
    return json.loads(result.stdout)["throughput_rps"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--route", default="/plaintext")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    client = engine.ensure_engine()
    images.ensure_image(client, servers.get_server("go-nethttp"))
    images.ensure_image(client, None)
    harness, plain = [], []
    for pair in range(1, args.pairs + 1):
        order = [("loadlab", loadlab_trial), ("plain", None)] if pair % 2 else [("plain", None), ("loadlab", loadlab_trial)]
        for kind, _ in order:
            started = time.monotonic()
            if kind == "loadlab":
                harness.append(loadlab_trial(args.route, args.connections, args.duration, args.warmup))
            else:
                plain.append(plain_wrk(client, args.route, args.connections, args.duration, args.warmup))
            print(f"pair {pair} {kind:<8} {(harness if kind == 'loadlab' else plain)[-1]:>10,.0f} req/s "
                  f"({time.monotonic() - started:.0f} s)", flush=True)
    from loadlab import stats

    ratio = stats.ratio_of_medians_ci(plain, harness)
    print(f"loadlab trial: median {statistics.median(harness):,.0f} req/s (min {min(harness):,.0f}, max {max(harness):,.0f})")
    print(f"plain wrk:     median {statistics.median(plain):,.0f} req/s (min {min(plain):,.0f}, max {max(plain):,.0f})")
    print(f"ratio loadlab/plain: {ratio.ratio:.3f} [{ratio.ci_low:.3f}, {ratio.ci_high:.3f}] (95% bootstrap CI)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
