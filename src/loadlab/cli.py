"""The `loadlab` command: thin argument parsing over the package's stages."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import sys

from loadlab.errors import LoadlabError
from loadlab.units import MIB


def _settings(pairs: list[str]) -> dict[str, str]:
    from loadlab.errors import ParameterError

    settings: dict[str, str] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise ParameterError("--setting", pair, "NAME=VALUE")
        name, value = pair.split("=", 1)
        settings[name] = value
    return settings


def command_engine(args) -> int:
    from loadlab.harness import engine, images

    client = engine.ensure_engine(install=not args.no_install)
    print("Docker engine answers:", json.dumps(engine.engine_description(client)))
    images.ensure_base_image(client)
    print(f"base image {images.BASE_IMAGE} present")
    missing = engine.ensure_profiler_tools()
    print("perf: " + (missing or "present"))
    return 0


def command_build(args) -> int:
    """Build images; an optional one whose input cannot be had is skipped with its reason, anything else fails."""
    from loadlab import plans, servers
    from loadlab.errors import ParameterError
    from loadlab.harness import engine, images
    from loadlab.harness.microbench import programs as microbench_programs

    if args.scale is not None:
        plans.scale(args.scale)  # a wrong name fails here, naming the scales, before the engine is touched
        if not args.all:
            raise ParameterError("--scale", args.scale, "only with --all")
    client = engine.ensure_engine(install=not args.no_install)
    names = sorted(servers.all_servers()) if args.all else (args.server or [])
    # --scale: the images a scale's experiments start (plans.server_images); quick never builds what only full uses.
    wanted = plans.server_images(args.scale) if args.scale else None
    ca_bundle = images.ca_bundle_path(args.ca_bundle)
    images.ensure_base_image(client)  # once, before the lanes: each build starts from it
    jobs: list[tuple[str, list]] = []  # (what, [(image, build: client -> tag)]): one lane's turn, in order
    build = functools.partial(images.ensure_image, rebuild=args.rebuild, ca_bundle=ca_bundle)
    if args.all or args.loadgen or not names:
        jobs.append(("loadgen", [(servers.loadgen_image(), lambda client: build(client, None))]))
    for name in names:
        spec = servers.get_server(name)
        variants = sorted(spec.variants) if args.variant is None else [args.variant]
        for variant in variants:
            if wanted is not None and (name, variant) not in wanted:
                print(f"{spec.image(variant)}: not built (no experiment measured at {args.scale} starts it)")
        variants = [variant for variant in variants if wanted is None or (name, variant) in wanted]
        if variants:
            jobs.append((name, [(spec.image(variant), functools.partial(build, spec=spec, variant=variant))
                                for variant in variants]))
    if args.all:
        # The microbenchmarks' images (one a JDK), which 01, 02 and 05 build on first use otherwise: in a lane here
        # they overlap the other builds instead of adding their minute and a half to the notebooks'.
        jobs.append(("microbench", [(microbench_programs.image_tag(jdk),
                                     functools.partial(microbench_programs.build, jdk=jdk, rebuild=args.rebuild,
                                                       ca_bundle=ca_bundle))
                                    for jdk in sorted(microbench_programs.jdk_build_args())]))
    # The longest first (a cold build here, 2026-12-06: loadgen 166 s, php-swoole 198 s, rust-tokio 75 s, the
    # others 8-48 s), so that the short ones fill the other lane instead of leaving a long one to run alone at the end.
    jobs.sort(key=lambda job: images.SLOW_BUILDS.index(job[0]) if job[0] in images.SLOW_BUILDS else len(images.SLOW_BUILDS))
    failures, skipped = images.build_in_lanes(engine.client_from_env, jobs, keep_going=args.keep_going)
    for unavailable in skipped:
        print(f"SKIPPED {unavailable.image} (optional): {unavailable.reason}")
    for failure in failures:
        print("FAILED", failure, file=sys.stderr)
    return 1 if failures else 0


def command_verify(args) -> int:
    """The contract checks; with --fuzz, then the garbage fuzz on the same container (it must survive)."""
    from loadlab.contract import fuzz, verify
    from loadlab.harness import session

    fuzzed = None
    with session.ServerSession.start(
        server=args.server, variant=args.variant, settings=_settings(args.setting), cpuset=args.server_cpus,
        build=not args.no_build,
    ) as running:
        checks = verify.verify_server(running.host, running.port, running.spec.name, running.spec.routes,
                                      listen_backlog=running.listen_backlog())
        if args.fuzz:
            fuzzed = fuzz.run_fuzz(
                running.host, running.port, seed=args.fuzz_seed, max_requests=args.fuzz_requests,
                time_budget_s=args.fuzz_time_budget, liveness_route=fuzz.liveness_route_for(running.spec.routes),
            )
    summary = verify.summarize(checks)
    if fuzzed is not None:
        summary["fuzz"] = fuzzed.to_dict()
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        for check in checks:
            mark = "pass" if check.passed else "FAIL"
            print(f"{mark}  {check.name}" + ("" if check.passed else f"\n      {check.detail}"))
        print(f"{summary['checks'] - summary['failed']} passed, {summary['failed']} failed")
        if fuzzed is not None:
            print("fuzz: " + fuzzed.summary())
    survived = fuzzed is None or fuzzed.alive
    return 0 if summary["passed"] and survived else 1


def _trial_config(args):
    from loadlab.config import TrialConfig

    return TrialConfig(
        server=args.server, route=args.route, variant=args.variant, settings=_settings(args.setting),
        load_mode="open" if args.rate else "closed", connections=args.connections, rate_rps=args.rate,
        duration_s=args.duration, warmup_s=args.warmup, loadgen_threads=args.threads,
        pipeline_depth=args.pipeline, server_cpus=args.server_cpus, loadgen_cpus=args.loadgen_cpus,
        memory_limit_bytes=args.memory_limit_mib * MIB, cpu_quota=args.cpu_quota, cpu_period_ms=args.cpu_period_ms,
        max_in_flight=args.max_in_flight, open_loop_generator=args.open_loop_generator,
        connection_mode=args.connection_mode, harness_priority=args.harness_priority,
        verify=not args.no_verify,
        profilers=tuple(args.profiler or ()),
    ).validate()


def _print_row(row: dict) -> None:
    def show(value):
        if isinstance(value, float):
            return f"{value:.6g}"
        return str(value)

    width = max(len(k) for k in row)
    for key, value in row.items():
        if key == "latency_histogram_hdr":
            value = f"<{len(value)} chars>"
        print(f"{key:<{width}}  {show(value)}")


def command_trial(args) -> int:
    from loadlab.harness import container, engine, provenance, session
    from loadlab.harness.trial import run_trial
    from loadlab.manifest import Manifest, TrialRecord
    from loadlab.rundir import RunDirectory

    config = _trial_config(args)  # every parameter is checked before the engine is touched
    client = engine.ensure_engine()
    run_id = session.new_run_id("trial")
    run = RunDirectory.create("adhoc", run_id)
    # One trial outside any experiment: no times, conditions, images or annotations, as ad-hoc runs always were.
    manifest = Manifest(run_id=run_id, experiment="adhoc", status="running", parameters=[dataclasses.asdict(config)],
                        provenance=provenance.collect(client),
                        trial_order=[{"trial": 1, "condition": config.label(), "block": 1}],
                        absent=frozenset({"created_utc", "updated_utc", "conditions", "images", "runtime_versions",
                                          "annotations"}))
    run.write_manifest(manifest)
    try:
        partial = run.begin_trial(1)
        row = run_trial(config, partial, run_id, client, 1, log=lambda m: print(m, file=sys.stderr))
        run.finish_trial(1, partial)
        manifest.trials["1"] = TrialRecord(config.label(), row["status"], row.get("failure_reason"))
        manifest.status = "complete"
        run.write_manifest(manifest)
    finally:
        container.clean(client, run_id)
    if args.json:
        print(json.dumps(row, default=str))
    else:
        _print_row(row)
        print(f"raw data: {run.path}")
    return 0 if row["status"] == "ok" else 1


def command_run(args) -> int:
    from loadlab.experiment import Experiment
    from loadlab.harness import runner

    experiment = Experiment.from_yaml(args.experiment)  # validated before the engine is touched
    run = runner.run_experiment(experiment, resume_run_id=args.resume, progress=not args.no_progress,
                                log=lambda m: print(m, file=sys.stderr))
    manifest = run.read_manifest()
    print(f"run {run.run_id}: {manifest.status}, {len(manifest.trials)} trials ({manifest.count('failed')} failed) "
          f"in {run.path}")
    if args.process:
        from loadlab.tables import process_run

        process_run(run.path)
        print("processed tables written")
    return 0 if manifest.status == "complete" else 1


def command_process(args) -> int:
    from pathlib import Path

    from loadlab.rundir import find_run
    from loadlab.tables import process_run, processed_dir_for

    run_dir = Path(args.run) if Path(args.run).is_dir() else find_run(args.run)
    tables = process_run(run_dir)
    for name, table in tables.items():
        print(f"{name}: {len(table)} rows")
    print(f"written to {processed_dir_for(run_dir)}")
    return 0


def command_runs(args) -> int:
    from loadlab.rundir import list_runs

    runs = list_runs()
    if args.json:
        print(json.dumps(runs, indent=2))
        return 0
    if not runs:
        print("no runs yet under data/raw/")
    for run in runs:
        print(f"{run['experiment'] or '?':<28} {run['run_id'] or '?':<44} {run['status'] or '?':<11} "
              f"{run['ok']}/{run['planned']} ok, {run['failed']} failed  {run['updated_utc']}")
    return 0


def command_notebooks(args) -> int:
    from loadlab import report

    index = report.build_collection(args.scale, args.run_id, args.only)
    print(f"reports written; open {index}")
    return 0


def command_export(args) -> int:
    from loadlab import report

    index = report.export_existing()
    print(f"HTML re-exported; open {index}")
    return 0


def command_check_pages(args) -> int:
    from loadlab import report

    problems = report.check_exported(browser=not args.no_browser)
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problem(s) on the exported pages")
    return 1 if problems else 0


def command_clean(args) -> int:
    from loadlab.harness import container, engine, images

    if args.images:
        # A machine with nothing of ours on it: images are only on disk when dockerd is down, so start it.
        client = engine.ensure_engine(install=not args.no_install)
    else:
        client = engine.ensure_engine(install=False)
    removed = container.clean(client, args.run)
    print(f"removed {len(removed)} container(s)" + (": " + ", ".join(removed) if removed else ""))
    if args.images:
        gone = images.remove_all_images(client)
        print(f"removed {len(gone)} image(s)" + (": " + ", ".join(gone) if gone else "") + "; every build starts cold")
    return 0


def _add_server_arguments(p) -> None:
    p.add_argument("--server", required=True, help="server folder name under servers/")
    p.add_argument("--variant", help="image variant (e.g. jdk21, jdk25); default: the server's default")
    p.add_argument("--setting", action="append", metavar="NAME=VALUE", help="a knob (env) for the server; repeatable")
    p.add_argument("--server-cpus", default="1", help="cpuset for the server container (default: 1)")
    p.add_argument("--no-build", action="store_true", help="fail instead of building a missing image")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="loadlab",
        description="What does a concurrency runtime cost under load? Build, verify and measure servers.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    _add_engine_commands(sub)
    _add_trial_command(sub)
    _add_run_commands(sub)
    _add_report_commands(sub)
    _add_clean_command(sub)
    return parser


def _add_engine_commands(sub) -> None:
    """engine, build, verify: the images and the servers' contract."""
    p = sub.add_parser("engine", help="make sure a Docker engine answers (installs/starts one as root on Debian) and the base image exists")
    p.add_argument("--no-install", action="store_true", help="never install or start dockerd; only report")
    p.set_defaults(func=command_engine)

    p = sub.add_parser("build", help="build server images (and the loadgen image)")
    p.add_argument("--server", action="append", help="server name (repeatable); default: only the loadgen")
    p.add_argument("--all", action="store_true", help="every server, every variant, and the loadgen")
    p.add_argument("--scale", help="with --all: only the server images the experiments measured at this scale "
                                   "(smoke, quick or full) start")
    p.add_argument("--loadgen", action="store_true", help="also the loadgen image")
    p.add_argument("--variant", help="one image variant (default: every variant of each server)")
    p.add_argument("--rebuild", action="store_true", help="build even if the image exists")
    p.add_argument("--keep-going", action="store_true", help="report failed builds at the end instead of stopping")
    p.add_argument("--ca-bundle", help="PEM bundle trusted in build stages only ('none' for none; default: $LOADLAB_CA_BUNDLE or the host's)")
    p.add_argument("--no-install", action="store_true", help="never install or start dockerd")
    p.set_defaults(func=command_build)

    p = sub.add_parser("verify", help="start a server and check it against servers/CONTRACT.md (--fuzz: then feed it garbage)")
    _add_server_arguments(p)
    p.add_argument("--fuzz", action="store_true",
                   help="after the checks, send malformed and slow requests; fails unless the server still answers")
    p.add_argument("--fuzz-seed", type=int, default=0, help="seed of the fuzz's random cases (default 0)")
    p.add_argument("--fuzz-requests", type=int, default=400, help="requests the fuzz sends at most (default 400)")
    p.add_argument("--fuzz-time-budget", type=float, default=12.0, help="seconds the whole fuzz may take (default 12)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=command_verify)


def _add_trial_command(sub) -> None:
    """trial: one trial with every knob of a TrialConfig."""
    p = sub.add_parser("trial", help="run one trial (fresh container, verify, warm-up, measure) and print its tidy row")
    _add_server_arguments(p)
    p.add_argument("--route", default="/plaintext", help="contract route with its query, e.g. '/cpu?n=1000' (default /plaintext)")
    p.add_argument("--connections", type=int, default=64, help="closed loop: wrk connections (default 64)")
    p.add_argument("--rate", type=float, help="open loop: requests per second (instead of wrk's closed loop)")
    p.add_argument("--duration", default="10s", help="measured window, whole seconds (default 10s)")
    p.add_argument("--warmup", default="5s", help="discarded warm-up before the window (default 5s)")
    p.add_argument("--threads", type=int, default=1, help="wrk threads (default 1)")
    p.add_argument("--pipeline", type=int, default=1, help="wrk pipeline depth (default 1: no pipelining)")
    p.add_argument("--loadgen-cpus", default="0", help="cpuset for the loadgen (default 0; disjoint from the server's)")
    p.add_argument("--memory-limit-mib", type=int, default=2048, help="server memory limit in MiB (default 2048)")
    p.add_argument("--cpu-quota", type=float, help="server CPU quota in CPUs (e.g. 0.5), below its cpuset")
    p.add_argument("--max-in-flight", type=int, default=10_000, help="open loop: at most this many requests in "
                   "flight, one connection each (default 10000)")
    p.add_argument("--open-loop-generator", default="openloop", help="open loop: openloop (the project's own, "
                   "latency from each request's intended send time; default) or vegeta")
    p.add_argument("--connection-mode", default="keep-alive", help="keep-alive (default) or per-request (a new "
                   "connection for every request)")
    p.add_argument("--cpu-period-ms", type=float, help="the CFS period the quota is granted in, 1-1000 ms "
                   "(default: the kernel's 100 ms)")
    p.add_argument("--no-verify", action="store_true", help="skip the contract checks before load")
    p.add_argument("--harness-priority", default="normal", help="the harness's own threads during the window: "
                   "normal (default) or idle (SCHED_IDLE: only when neither loadgen nor server wants a core)")
    p.add_argument("--profiler", "--profile", dest="profiler", action="append", metavar="PROFILER",
                   help="capture during the window: pprof, go-metrics, gctrace, jfr, gclog, perf, py-spy, uprobes, jfr-locks "
                   "(repeatable; --profile is its old name, kept for one release)")
    p.add_argument("--json", action="store_true", help="print the row as one JSON object")
    p.set_defaults(func=command_trial)


def _add_run_commands(sub) -> None:
    """run, process, runs: experiments, their raw folders and tables."""
    p = sub.add_parser("run", help="run an experiment file: randomized trials, resumable, tables from raw")
    p.add_argument("experiment", help="experiment YAML (see experiments/ and src/loadlab/experiment.py)")
    p.add_argument("--resume", metavar="RUN_ID", help="continue an interrupted run of the same experiment")
    p.add_argument("--process", action="store_true", help="build the processed tables afterwards")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=command_run)

    p = sub.add_parser("process", help="rebuild a run's tidy tables (parquet) from its raw folder")
    p.add_argument("run", help="run id or raw run folder")
    p.set_defaults(func=command_process)

    p = sub.add_parser("runs", help="list runs with their status")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=command_runs)


def _add_report_commands(sub) -> None:
    """notebooks, export, check-pages: the reports."""
    p = sub.add_parser("notebooks", help="execute the notebooks with papermill and export HTML + an index into reports/")
    p.add_argument("--scale", "--profile", dest="scale", default="quick", help="the run's scale: smoke, quick or full "
                   "(default quick; --profile is its old name, kept for one release)")
    p.add_argument("--run-id", help="'latest' to re-analyse the newest complete runs without measuring")
    p.add_argument("--only", nargs="+", metavar="NN", help="only notebooks whose names start with these prefixes")
    p.set_defaults(func=command_notebooks)

    p = sub.add_parser("export", help="re-export HTML and the index from already executed notebooks")
    p.set_defaults(func=command_export)

    p = sub.add_parser("check-pages", help="check the exported pages: no reprs or runaway precision; in headless "
                       "Chromium no console error, every figure loaded, flame graphs zoom (screenshots in reports/screenshots/)")
    p.add_argument("--no-browser", action="store_true", help="only the text checks")
    p.set_defaults(func=command_check_pages)


def command_testbed(args) -> int:
    """Two hosts on this machine (harness.testbed): up copies the base and loadgen images into the second engine."""
    from loadlab.harness import engine, images, testbed

    if args.action == "down":
        testbed.down()
        left = testbed.leftovers()
        print("nothing left behind" if not left else "left behind: " + ", ".join(left))
        return 0 if not left else 1
    if args.action == "status":
        bed = testbed.current()
        print(json.dumps(dataclasses.asdict(bed)) if bed else "no test bed is up")
        return 0
    client = engine.ensure_engine(install=False)
    tags = [images.BASE_IMAGE, images.ensure_image(client, None)]
    bed = testbed.up(images=tuple(tags))
    print(f"placement: server_docker_host: null (engine 1), loadgen_docker_host: {bed.docker_host}, "
          f"target_host: {bed.server_address}")
    return 0


def _add_clean_command(sub) -> None:
    """clean: leftover containers (and images)."""
    p = sub.add_parser("clean", help="remove every leftover loadlab container (label loadlab.run)")
    p.add_argument("--run", help="only the containers of this run id")
    p.add_argument("--images", action="store_true",
                   help="also remove every loadlab image, the base image included (what CI does first)")
    p.add_argument("--no-install", action="store_true", help="with --images: never install or start dockerd")
    p.set_defaults(func=command_clean)

    p = sub.add_parser("testbed", help="two hosts on this machine (root): a network namespace over a veth pair with "
                                       "a second Docker engine for the loadgen; up, down or status")
    p.add_argument("action", choices=("up", "down", "status"))
    p.set_defaults(func=command_testbed)


def _interrupt_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C, so every `finally` removes its containers."""
    import signal

    def handler(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def main(argv: list[str] | None = None) -> int:
    _interrupt_on_sigterm()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except LoadlabError as error:
        print(f"loadlab: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("loadlab: interrupted; containers were removed", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
