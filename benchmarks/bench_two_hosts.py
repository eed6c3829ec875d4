"""The same trial on one host and across the two-host test bed's veth, interleaved; and each sampling path's rate.

    sudo PYTHONPATH=src .venv/bin/python benchmarks/bench_two_hosts.py --pairs 3

Brings the bed up (harness.testbed), then runs PAIRS pairs of go-nethttp /json at 64 connections (wrk, 2 s warm-up,
5 s window), one trial with the loadgen on the default engine aiming at 127.0.0.1 and one with the loadgen on the
bed's engine aiming at the veth's far end, in alternating order; prints each trial's throughput, the median ratio
(across / one host) and the server-sampling rate (Hz) each path achieved: the local cgroup files, the sidecar, and
the engine's stats API (one more trial each). Takes the bed down at the end. Needs root and Docker.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from loadlab.config import TrialConfig, new_run_id
from loadlab.harness import engine, images, runner, testbed
from loadlab.harness.trial import run_trial
from loadlab.rundir import RunDirectory
from loadlab.servers import get_server


def _trial(client, loadgen, target: str, sampling: str, folder: Path) -> dict:
    config = TrialConfig(server="go-nethttp", route="/json", connections=64, loadgen_threads=2, duration_s="5s",
                         warmup_s="2s", target_host=target, server_sampling=sampling,
                         check_host_cpus=loadgen is client).validate()
    run_id = new_run_id("bench-two-hosts")
    run = RunDirectory.create("bench-two-hosts", run_id, raw_dir=folder)
    partial = run.begin_trial(1)
    row = run_trial(config, partial, run_id, client, 1, log=lambda m: None, loadgen_client=loadgen)
    run.finish_trial(1, partial)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    client = engine.ensure_engine()
    images.ensure_image(client, get_server("go-nethttp"))
    bed = testbed.up(images=(images.BASE_IMAGE, images.ensure_image(client, None)))
    try:
        across_engine = runner._client_for(bed.docker_host)
        folder = Path(tempfile.mkdtemp(prefix="bench-two-hosts-"))
        ratios = []
        for pair in range(args.pairs):
            sides = [("one host", client, "127.0.0.1"), ("across", across_engine, bed.server_address)]
            rows = {}
            for name, loadgen, target in (sides if pair % 2 == 0 else sides[::-1]):
                rows[name] = _trial(client, loadgen, target, "auto", folder)
                print(f"pair {pair + 1} {name:9s} {rows[name]['throughput_rps']:9.0f} req/s "
                      f"(sampled: {rows[name]['server_sampling']})")
            ratios.append(rows["across"]["throughput_rps"] / rows["one host"]["throughput_rps"])
        print(f"across / one host: median {statistics.median(ratios):.3f} over {len(ratios)} pairs "
              f"({', '.join(f'{r:.3f}' for r in ratios)})")
        for sampling in ("auto", "sidecar", "stats-api"):
            row = _trial(client, across_engine, bed.server_address, sampling, folder)
            print(f"server sampled by {row['server_sampling']:26s} {row['server_sampling_rate_hz'] or 0:5.2f} Hz "
                  f"({row['samples']} readings in a {row['duration_s']:.0f} s window)")
    finally:
        testbed.down()


if __name__ == "__main__":
    main()
