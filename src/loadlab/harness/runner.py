"""Run an experiment: every scheduled trial, in order, resumable, nothing lost.

The manifest is rewritten (atomically) after every trial, so an interrupted
run can be resumed with the same run id: leftover containers of the run are
removed by label, a trial that was cut off mid-way (`trials/<n>.partial/`)
is discarded and run again, and finished trials are never repeated. A failed
trial is one recorded outcome; the run goes on.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import docker
import yaml

from loadlab import paths
from loadlab.config import new_run_id, parse_cpuset
from loadlab.errors import EngineLost, LoadlabError, ParameterError
from loadlab.experiment import Experiment
from loadlab.harness import container, engine, images, provenance, spares
from loadlab.harness.trial import run_trial
from loadlab.manifest import Manifest, TrialRecord
from loadlab.rundir import (STATUS_COMPLETE, STATUS_INTERRUPTED, STATUS_RUNNING, RunDirectory, now_utc, read_json,
                            write_text_atomic)
from loadlab.servers import get_server


def _client_for(docker_host: str | None):
    """The default engine (bootstrapped if need be), or the one at `docker_host`."""
    if docker_host is None:
        return engine.ensure_engine()
    try:
        # ssh:// through the system's ssh client (its config, keys and agent), which runs `docker system dial-stdio`
        # on the far host; the SDK's default for ssh is paramiko, which the environment does not pin.
        client = docker.DockerClient(base_url=docker_host, timeout=120, use_ssh_client=docker_host.startswith("ssh://"))
        client.ping()
        return client
    except Exception as error:
        raise ParameterError("placement docker host", docker_host, f"an engine that answers ({error})") from None


def _loadgen_version() -> dict:
    go_mod = (paths.SERVERS_DIR / "loadgen" / "vegeta" / "go.mod").read_text()
    match = re.search(r"github.com/tsenart/vegeta/v12 (v[0-9.]+)", go_mod)
    cargo = (paths.SERVERS_DIR / "loadgen" / "openloop" / "Cargo.toml").read_text()
    openloop = re.search(r'^version = "([^"]+)"', cargo, re.MULTILINE)
    return {"vegeta": match.group(1) if match else None, "wrk": "Debian trixie package (see image)",
            "openloop": openloop.group(1) if openloop else None}


def _placement_provenance(experiment: Experiment, loadgen_client) -> dict:
    """Both sides' engines when the loadgen runs on another one: addresses, engine facts (the host's name,
    kernel, CPUs), and the address the load crossed to."""
    placement = experiment.placement
    if loadgen_client is None:
        return {}
    return {"loadgen_engine": engine.engine_description(loadgen_client),
            "placement": {"server_docker_host": placement.server_docker_host or "default",
                          "loadgen_docker_host": placement.loadgen_docker_host or "default",
                          "target_host": placement.target_host, "server_sampling": placement.server_sampling}}


def _trial_cpus(experiment: Experiment) -> set[int]:
    """The CPUs the trials are pinned to, server's and loadgen's: where the host speed index is read."""
    placement = experiment.placement
    return parse_cpuset(placement.server_cpus, "server_cpus") | parse_cpuset(placement.loadgen_cpus, "loadgen_cpus")


def new_manifest(experiment: Experiment, run_id: str, server_client, annotations: dict | None = None,
                 loadgen_client=None) -> Manifest:
    """A new run's manifest; `loadgen_client` (when the loadgen runs on another engine) is recorded beside the
    server's engine."""
    return Manifest(
        run_id=run_id,
        experiment=experiment.name,
        status=STATUS_RUNNING,
        created_utc=now_utc(),
        updated_utc=now_utc(),
        parameters=experiment.to_dict(),
        provenance={**provenance.collect(server_client, _trial_cpus(experiment)), "loadgen": _loadgen_version(),
                    **_placement_provenance(experiment, loadgen_client)},
        conditions=[
            {"condition": c["condition"], "label": c["label"], "level": c["level"], "config": dataclasses.asdict(c["config"])}
            for c in experiment.conditions()
        ],
        trial_order=experiment.schedule(),
        annotations=annotations or {},
    )


EXPERIMENT_FILE = "experiment.yaml"


def _engine_answers(*clients) -> bool:
    try:
        for client in clients:
            client.ping()
        return True
    except Exception:  # the SDK raises several unrelated types for "no engine"
        return False


def resume_command(run: RunDirectory) -> str:
    """The exact command that resumes `run` (its experiment file is kept in the run folder)."""
    return f"loadlab run {run.path / EXPERIMENT_FILE} --resume {run.run_id}"


def _check_same_experiment(manifest: Manifest, experiment: Experiment) -> None:
    recorded = manifest.parameters
    try:  # a field added since the run began (placement.server_sampling) reads as its default
        recorded = Experiment.from_dict(recorded).to_dict()
    except LoadlabError:
        pass
    current = experiment.to_dict()
    for key in current:
        if recorded.get(key) != current.get(key):
            raise ParameterError(
                "experiment", experiment.name,
                f"the same definition as when run {manifest.run_id} started (field {key!r} differs); "
                "start a new run instead of resuming",
            )


@dataclasses.dataclass
class _Engines:
    """The engine that runs the servers and the one that runs the loadgen (often the same)."""

    server: object
    loadgen: object

    @classmethod
    def for_experiment(cls, experiment: Experiment) -> _Engines:
        server_client = _client_for(experiment.placement.server_docker_host)
        if experiment.placement.loadgen_docker_host == experiment.placement.server_docker_host:
            return cls(server_client, server_client)
        return cls(server_client, _client_for(experiment.placement.loadgen_docker_host))

    def silent(self, experiment: Experiment) -> str:
        """Which engine stopped answering, for the engine-lost line ('' when both are the one engine)."""
        if self.loadgen is self.server:
            return ""
        for side, client, address in (("server", self.server, experiment.placement.server_docker_host),
                                      ("loadgen", self.loadgen, experiment.placement.loadgen_docker_host)):
            if not _engine_answers(client):
                return f" of the {side} ({address or 'the default engine'})"
        return ""

    def each(self) -> list:
        return list({id(self.server): self.server, id(self.loadgen): self.loadgen}.values())

    def clean(self, run_id: str) -> None:
        """Remove the run's containers from both engines."""
        for client in self.each():
            container.clean(client, run_id)


def _resume_run(experiment: Experiment, run_id: str, raw_dir: Path, engines: _Engines, log) -> tuple[RunDirectory, Manifest]:
    """The run folder and manifest of an interrupted run, its leftover containers and unfinished trials removed."""
    run = RunDirectory(Path(raw_dir) / experiment.name / run_id)
    if not run.manifest_path.exists():
        raise ParameterError("resume", run_id, f"a run of {experiment.name!r} under {Path(raw_dir) / experiment.name}")
    manifest = run.read_manifest()
    _check_same_experiment(manifest, experiment)
    for client in engines.each():
        removed = container.clean(client, run.run_id)
        if removed:
            log(f"removed {len(removed)} leftover container(s) of {run.run_id}")
    discarded = run.discard_partial_trials()
    if discarded:
        log(f"discarded unfinished trial folder(s): {', '.join(discarded)}")
    return run, manifest


def _new_run(experiment: Experiment, raw_dir: Path, engines: _Engines, annotations: dict | None) -> tuple[RunDirectory, Manifest]:
    """A new run folder with its manifest and the experiment file it can be resumed from."""
    run = RunDirectory.create(experiment.name, new_run_id(experiment.name), raw_dir)
    manifest = new_manifest(experiment, run.run_id, engines.server, annotations,
                            engines.loadgen if engines.loadgen is not engines.server else None)
    run.write_manifest(manifest)
    # The definition as run, so the run can be resumed (and re-read) from its own folder.
    write_text_atomic(run.path / EXPERIMENT_FILE, yaml.safe_dump(experiment.to_dict(), sort_keys=False))
    return run, manifest


def _build_images(experiment: Experiment, manifest: Manifest, engines: _Engines, log) -> dict[str, dict]:
    """Every image the run needs, built before the first trial (a build failure should not surface mid-run);
    returns the experiment's conditions by name."""
    images.ensure_image(engines.loadgen, None, log=log)
    conditions = {c["condition"]: c for c in experiment.conditions()}
    for condition in conditions.values():
        config = condition["config"]
        tag = images.ensure_image(engines.server, get_server(config.server), config.variant, log=log)
        manifest.images[condition["label"]] = {"image": tag, "image_id": images.image_digest(engines.server, tag),
                                               "build_hash": images.image_build_hash(engines.server, tag)}
    return conditions


@dataclasses.dataclass
class _Position:
    """Where the run is: the trial running now (for the engine-lost message) and how many this call ran."""

    number: int | None = None
    condition: str | None = None
    done_now: int = 0

    def where(self) -> str:
        return f"trial {self.number} ({self.condition})" if self.number is not None else "the start of the run"


def _run_pending(run: RunDirectory, manifest: Manifest, conditions: dict, engines: _Engines, bar, position: _Position,
                 stop_after_trials: int | None) -> None:
    """Every scheduled trial not yet finished, in order; the manifest is rewritten after each."""
    finished = set(run.finished_trials())
    failed = manifest.count("failed")
    for scheduled in [t for t in manifest.trial_order if t["trial"] not in finished]:
        if stop_after_trials is not None and position.done_now >= stop_after_trials:
            break
        position.number, position.condition = number, condition_name = scheduled["trial"], scheduled["condition"]
        condition = conditions[condition_name]
        bar.set_description(f"trial {number}: {condition_name}"[:60])
        partial = run.begin_trial(number)
        row = run_trial(condition["config"], partial, run.run_id, engines.server, number,
                        log=lambda m: bar.write(m), loadgen_client=engines.loadgen)
        run.finish_trial(number, partial)
        manifest.trials[str(number)] = TrialRecord(condition_name, row["status"], row.get("failure_reason"), now_utc())
        if row["status"] == "ok" and row.get("runtime_version"):
            manifest.runtime_versions[condition["label"]] = row["runtime_version"]
        failed += row["status"] == "failed"
        manifest.updated_utc = now_utc()
        run.write_manifest(manifest)
        position.done_now += 1
        bar.update(1)
        bar.set_postfix(failed=failed)


def _finished_rows(run: RunDirectory) -> dict[int, dict]:
    """Every finished trial's row (result.json), by trial number."""
    rows = {}
    for number in run.finished_trials():
        path = run.trial_dir(number) / "result.json"
        rows[number] = read_json(path) if path.exists() else {}
    return rows


def _run_spares(experiment: Experiment, run: RunDirectory, manifest: Manifest, conditions: dict, engines: _Engines,
                bar, position: _Position, stop_after_trials: int | None) -> bool:
    """Spare trials for the judged conditions whose loadgen spoiled trials (harness.spares), round by round,
    each round in the manifest before it runs, so that an interrupted run resumes it. Returns whether none is
    still due (False when `stop_after_trials` stopped the run with spares to run: a resume runs them)."""
    if experiment.spare_trials <= 0:
        return True
    while True:
        due = spares.spares_due(experiment.conditions(), manifest.trial_order, _finished_rows(run),
                                experiment.spare_trials)
        if not due:
            return True
        if stop_after_trials is not None and position.done_now >= stop_after_trials:
            return False
        added = spares.schedule_spares(manifest.trial_order, due, experiment.seed)
        manifest.trial_order.extend(added)
        manifest.updated_utc = now_utc()
        run.write_manifest(manifest)
        bar.total += len(added)
        bar.write(spares.spares_text(due))
        _run_pending(run, manifest, conditions, engines, bar, position, stop_after_trials)


def run_experiment(
    experiment: Experiment,
    resume_run_id: str | None = None,
    raw_dir: Path | None = None,
    progress: bool = True,
    log=print,
    stop_after_trials: int | None = None,
    annotations: dict | None = None,
) -> RunDirectory:
    """Run (or resume) `experiment`; returns its run folder.

    `stop_after_trials` stops early after that many trials of this call (for
    tests and partial sittings); the run then stays resumable. `annotations`
    (e.g. servers left out and why) are kept in the manifest.
    """
    experiment.validate(check_host=True)
    raw_dir = Path(raw_dir) if raw_dir is not None else paths.RAW_DIR
    engines = _Engines.for_experiment(experiment)
    if resume_run_id:
        run, manifest = _resume_run(experiment, resume_run_id, raw_dir, engines, log)
    else:
        run, manifest = _new_run(experiment, raw_dir, engines, annotations)
    conditions = _build_images(experiment, manifest, engines, log)
    bar = _progress_bar(len(manifest.trial_order), len(run.finished_trials()), progress)
    manifest.status = STATUS_RUNNING
    position, engine_lost = _Position(), False
    try:
        _run_pending(run, manifest, conditions, engines, bar, position, stop_after_trials)
        none_due = _run_spares(experiment, run, manifest, conditions, engines, bar, position, stop_after_trials)
        complete = none_due and len(run.finished_trials()) == len(manifest.trial_order)
        manifest.status = STATUS_COMPLETE if complete else STATUS_INTERRUPTED
    except LoadlabError:
        manifest.status = STATUS_INTERRUPTED
        raise
    except Exception as error:
        manifest.status = STATUS_INTERRUPTED
        if _engine_answers(engines.server, engines.loadgen):
            raise
        engine_lost = True
        raise EngineLost(
            f"the Docker engine{engines.silent(experiment)} stopped answering during {position.where()} ({type(error).__name__}); run {run.run_id} "
            f"is marked interrupted, its finished trials are kept; once an engine answers again, resume it with: "
            f"{resume_command(run)}"
        ) from None
    except BaseException:
        manifest.status = STATUS_INTERRUPTED
        raise
    finally:
        bar.close()
        provenance.record_speed(manifest.provenance, "end")  # every finish, so a resumed run's end is its last
        manifest.updated_utc = now_utc()
        run.write_manifest(manifest)
        # After an engine loss the engine that still answers is cleaned now; the lost one on resume.
        for client in engines.each():
            if not engine_lost or _engine_answers(client):
                container.clean(client, run.run_id)
    return run


BATCH_ENV = "LOADLAB_BATCH"


class LineProgress:
    """One plain line per trial (done, failed, time left), for batch runs.

    A redrawn bar turns into noise in an executed notebook's HTML and in
    papermill's log; a line per trial reads well in a terminal. Where
    $LOADLAB_PROGRESS_LOG names a file (`loadlab notebooks` sets it and echoes
    the file to the terminal), the lines go there and not to stdout: printed
    in a notebook's kernel, they would be the cell's output and end up in the
    exported page. Same interface as the parts of tqdm the runner uses.
    """

    def __init__(self, total: int, initial: int):
        import os
        import time

        from loadlab.config import PROGRESS_LOG_ENV

        self.total, self.done, self.started, self.description, self.failed = total, initial, time.monotonic(), "", 0
        self.initial = initial
        self.log_path = os.environ.get(PROGRESS_LOG_ENV) or None

    def set_description(self, text: str) -> None:
        self.description = text

    def set_postfix(self, failed: int = 0) -> None:
        self.failed = failed

    def write(self, message: str) -> None:
        if self.log_path is None:
            print(message, flush=True)
            return
        with open(self.log_path, "a", encoding="utf-8") as log:
            log.write(message + "\n")

    def update(self, count: int) -> None:
        import time

        self.done += count
        elapsed = time.monotonic() - self.started
        per_trial = elapsed / max(1, self.done - self.initial)
        left_s = per_trial * (self.total - self.done)
        self.write(f"[{self.done}/{self.total}] {self.description} finished; {self.failed} failed so far; "
                   f"about {left_s / 60:.1f} min left")

    def close(self) -> None:
        pass


def _progress_bar(total: int, initial: int, enabled: bool):
    """tqdm (a widget in notebooks, a bar in terminals), or LineProgress when $LOADLAB_BATCH is set."""
    import os

    if enabled and os.environ.get(BATCH_ENV):
        return LineProgress(total, initial)
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, unit="trial", disable=not enabled, dynamic_ncols=True)
