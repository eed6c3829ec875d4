"""Experiment files: validated before anything starts, every error naming its field."""

import pytest
import yaml

from loadlab.errors import ParameterError
from loadlab.experiment import Durations, Experiment, Load, ServerEntry

BASE = {
    "name": "exp",
    "seed": 5,
    "trials_per_condition": 3,
    "load": {"mode": "closed", "route": "/json", "connections": [8, 64]},
    "durations": {"warmup_s": 1, "duration_s": 2},
    "servers": [{"server": "go-nethttp", "label": "a"}, {"server": "go-nethttp", "label": "b"}],
}


def with_changes(**changes):
    document = yaml.safe_load(yaml.safe_dump(BASE))
    for path, value in changes.items():
        target = document
        keys = path.split("__")
        for key in keys[:-1]:
            target = target[int(key)] if key.isdigit() else target[key]
        target[keys[-1]] = value
    return document


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"name": "Bad Name!"}, "name"),
        ({"trials_per_condition": 0}, "trials_per_condition"),
        ({"load__connections": []}, "load.connections"),
        ({"load__connections": [0]}, "load.connections"),
        ({"load__mode": "both"}, "load.mode"),
        ({"load__route": "/nope"}, "load.route (or servers[0].route)"),
        ({"load__conections": [3]}, "load.conections"),
        ({"durations__duration_s": 0}, "durations.duration_s"),
        ({"servers__1__server": "cobol-cics"}, "servers[1].server"),
        ({"servers__1__settings": {"GOMAXPROCS": "lots"}}, "servers[1].settings.GOMAXPROCS"),
        ({"servers__1__label": "a"}, "servers[].label"),
        ({"placement": {"server_cpus": "0", "loadgen_cpus": "0"}}, "placement.loadgen_cpus"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_a_wrong_field_is_named(changes, field):
    with pytest.raises(ParameterError) as caught:
        Experiment.from_dict(with_changes(**changes))
    assert caught.value.parameter == field
    assert str(caught.value).startswith(field)


def test_schedule_is_seeded_blocked_and_interleaved():
    experiment = Experiment.from_dict(BASE)
    schedule = experiment.schedule()
    names = {c["condition"] for c in experiment.conditions()}
    assert len(schedule) == 4 * 3 and [t["trial"] for t in schedule] == list(range(1, 13))
    for block in (1, 2, 3):
        assert {t["condition"] for t in schedule if t["block"] == block} == names
    assert schedule == Experiment.from_dict(BASE).schedule()
    other = Experiment.from_dict({**BASE, "seed": 6}).schedule()
    assert [t["condition"] for t in other] != [t["condition"] for t in schedule]


def test_the_schedule_is_the_shared_interleaving():
    from loadlab.config import interleave

    experiment = Experiment.from_dict(BASE)
    names = [c["condition"] for c in experiment.conditions()]
    expected = [(block + 1, name) for block, name in interleave(names, blocks=3, seed=5)]
    assert [(t["block"], t["condition"]) for t in experiment.schedule()] == expected


def test_yaml_file_round_trip(tmp_path):
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump(BASE))
    experiment = Experiment.from_yaml(path)
    assert Experiment.from_dict(experiment.to_dict()).to_dict() == experiment.to_dict()
    with pytest.raises(ParameterError, match="experiment file"):
        Experiment.from_yaml(tmp_path / "missing.yaml")


def test_the_committed_experiments_are_valid():
    from loadlab import paths

    files = sorted((paths.ROOT / "experiments").glob("*.yaml"))
    assert files
    for path in files:
        Experiment.from_yaml(path)


def test_capacity_fractions_offer_each_server_its_own_rate_and_name_the_fraction_as_the_level():
    from loadlab.experiment import Experiment, Load, ServerEntry

    experiment = Experiment(
        name="fractions", servers=[ServerEntry("go-nethttp", label="go", capacity_rps=20_000.0),
                                   ServerEntry("go-nethttp", label="go-twin", capacity_rps=8_000.0)],
        load=Load(mode="open", route="/json", connections=[1], capacity_fractions=[0.25, 0.5]),
    ).validate()
    offered = {(c["label"], c["level"]): c["config"].rate_rps for c in experiment.conditions()}
    assert offered == {("go", 0.25): 5_000.0, ("go", 0.5): 10_000.0, ("go-twin", 0.25): 2_000.0, ("go-twin", 0.5): 4_000.0}
    assert {c["condition"] for c in experiment.conditions()} >= {"go@f0.25", "go-twin@f0.5"}


def test_a_fraction_of_a_measured_capacity_is_offered_and_recorded_as_a_whole_rate():
    from loadlab.experiment import Experiment, Load, ServerEntry

    experiment = Experiment(
        name="fractions", servers=[ServerEntry("go-nethttp", label="go", capacity_rps=16_333.74)],
        load=Load(mode="open", route="/json", connections=[1], capacity_fractions=[0.5]),
    ).validate()
    assert [c["config"].rate_rps for c in experiment.conditions()] == [8_167.0]


def test_a_slowest_basis_offers_every_server_the_same_rate_a_fraction_of_the_slowest_capacity():
    from loadlab.errors import ParameterError
    from loadlab.experiment import Experiment, Load, ServerEntry

    experiment = Experiment(
        name="fractions", servers=[ServerEntry("go-nethttp", label="go", capacity_rps=16_333.74),
                                   ServerEntry("go-nethttp", label="go-twin", capacity_rps=387.8)],
        load=Load(mode="open", route="/json", connections=[1], capacity_fractions=[0.25, 0.5], capacity_basis="slowest"),
    ).validate()
    offered = {(c["label"], c["level"]): c["config"].rate_rps for c in experiment.conditions()}
    assert offered == {("go", 0.25): 97.0, ("go", 0.5): 194.0, ("go-twin", 0.25): 97.0, ("go-twin", 0.5): 194.0}
    with pytest.raises(ParameterError, match=r"load\.capacity_basis.*\"own\".*\"slowest\""):
        Experiment(name="x", servers=[ServerEntry("go-nethttp", label="go", capacity_rps=100.0)],
                   load=Load(mode="open", route="/json", connections=[1], capacity_fractions=[0.5],
                             capacity_basis="fastest")).validate()


def test_capacity_fractions_need_every_capacity_and_no_fixed_rates():
    from loadlab.errors import ParameterError
    from loadlab.experiment import Experiment, Load, ServerEntry

    with pytest.raises(ParameterError, match=r"servers\[0\]\.capacity_rps"):
        Experiment(name="x", servers=[ServerEntry("go-nethttp", label="go")],
                   load=Load(mode="open", route="/json", connections=[1], capacity_fractions=[0.5])).validate()
    with pytest.raises(ParameterError, match=r"load\.rate_rps"):
        Experiment(name="x", servers=[ServerEntry("go-nethttp", label="go", capacity_rps=100.0)],
                   load=Load(mode="open", route="/json", connections=[1], rate_rps=[5.0], capacity_fractions=[0.5])).validate()


def test_a_server_of_its_own_quota_overrides_the_runs_and_the_others_keep_theirs():
    from loadlab.experiment import Experiment, Load, Placement, ServerEntry

    experiment = Experiment(
        name="quotas", servers=[ServerEntry("go-nethttp", label="go"), ServerEntry("rust-tokio", label="rust", cpu_quota=0.5)],
        load=Load(mode="closed", route="/json", connections=[8]), placement=Placement(cpu_quota=None),
    ).validate()
    assert {c["label"]: c["config"].cpu_quota for c in experiment.conditions()} == {"go": None, "rust": 0.5}


def test_a_cfs_period_reaches_every_trial_and_a_quota_it_cannot_grant_names_the_placement_field():
    from loadlab.experiment import Experiment, Load, Placement, ServerEntry

    def experiment(period_ms):
        return Experiment(
            name="periods", servers=[ServerEntry("go-nethttp", label="go", cpu_quota=0.05),
                                     ServerEntry("rust-tokio", label="rust", cpu_quota=0.5)],
            load=Load(mode="closed", route="/json", connections=[8]), placement=Placement(cpu_period_ms=period_ms))

    assert {c["config"].cpu_period_ms for c in experiment(20.0).validate().conditions()} == {20.0}
    with pytest.raises(ParameterError, match=r"placement\.cpu_period_ms.*at least 20 ms"):
        experiment(10.0).validate()


def test_a_server_of_its_own_profilers_replaces_the_experiments_list_for_it_alone():
    document = with_changes(profilers=["pprof"], servers__1__profilers=["perf"])
    experiment = Experiment.from_dict(document)
    assert {c["label"]: c["config"].profilers for c in experiment.conditions()} == {"a": ("pprof",), "b": ("perf",)}
    with pytest.raises(ParameterError, match="profilers"):
        Experiment.from_dict(with_changes(servers__1__profilers=["dtrace"]))


def test_a_file_without_a_required_field_names_the_file_and_the_missing_field(tmp_path):
    from loadlab.errors import ParameterError
    from loadlab.experiment import Experiment

    path = tmp_path / "nameless.yaml"
    path.write_text("servers: [{server: go-nethttp}]\nload: {mode: closed, route: /json, connections: [8]}\n")
    with pytest.raises(ParameterError) as raised:
        Experiment.from_yaml(path)
    assert str(raised.value).startswith(f"{path}: the field name is missing: name must be ")


def test_a_measured_trial_carries_no_recorder_and_a_profile_trial_keeps_it():
    from loadlab import plans

    for experiment in (plans.runtime_overhead("quick"), plans.json_api("quick")):
        for entry in experiment.servers:
            config = experiment.trial_config(entry, experiment.levels()[0])
            assert not config.profilers, (experiment.name, entry.display_label())
            if entry.server == "java-threads":
                assert config.settings["JFR"] == "off", (experiment.name, entry.display_label())
    profiled = plans.cpu_profiles("quick")
    java = next(entry for entry in profiled.servers if entry.server == "java-threads")
    assert profiled.trial_config(java, profiled.levels()[0]).settings.get("JFR") != "off"


def test_s1s_java_runs_s1s_jvm_and_the_trial_records_its_flags():
    from loadlab import plans

    for experiment in (plans.runtime_overhead("quick"), plans.cpu_profiles("quick"),
                       plans.runtime_overhead_latency("quick", {"go": 1000.0, "java-platform": 500.0, "rust": 900.0})):
        for entry in experiment.servers:
            if entry.server == "java-threads":
                config = experiment.trial_config(entry, experiment.levels()[0])
                assert config.settings["JAVA_OPTS"] == "-XX:+UseZGC -Xms512m -Xmx512m"
    # Other sources keep the image's default JVM.
    for entry in plans.io_coroutines("quick").servers:
        assert "JAVA_OPTS" not in entry.settings


def test_latest_refuses_a_run_measured_under_another_plan_and_names_what_changed(tmp_path):
    """A page's prose describes today's plan: "latest" never renders it over a run of an earlier plan."""
    import dataclasses

    from loadlab import plans, study
    from loadlab.manifest import Manifest

    def recorded(experiment, missing=None):
        return Manifest("run-1", experiment.name, "complete", parameters=experiment.to_dict(),
                        annotations={"missing_servers": missing or {}})

    plan = plans.runtime_overhead("quick")
    earlier = dataclasses.replace(plan, load=dataclasses.replace(plan.load, route="/json", connection_mode="keep-alive"))
    assert study.plan_differences(plan, recorded(earlier)) == ["load.connection_mode: keep-alive -> per-request",
                                                      "load.route: /json -> /plaintext200"]
    # A knob set since: the server, the knob, and its values, written as a reader reads them.
    unset = dataclasses.replace(plan, servers=[dataclasses.replace(e, settings={"THREAD_MODEL": "platform"})
                                               if e.display_label() == "java-platform" else e for e in plan.servers])
    assert study.plan_differences(plan, recorded(unset)) == [
        "server java-platform: JAVA_OPTS unset -> -XX:+UseZGC -Xms512m -Xmx512m"]
    assert study.plan_differences(plan, recorded(plan)) == []
    # A server left out because its image could not be built here is what the page says, not a change of plan.
    without_swoole = dataclasses.replace(plan, servers=[e for e in plan.servers if e.display_label() != "swoole"])
    assert study.plan_differences(plan, recorded(without_swoole, {"swoole": "PECL is unreachable"})) == []
    assert study.plan_differences(plan, recorded(without_swoole)) == ["server swoole: added"]


def test_only_a_runtime_that_compiles_while_it_serves_gets_the_jit_warm_up_allowance():
    """A JVM's throughput climbs for seconds after start; Go's and Rust's do not, so they keep the common maximum."""
    from loadlab.experiment import Durations, Experiment, Load, ServerEntry
    from loadlab.servers import all_servers

    # HotSpot and V8 compile hot code while serving; BEAM's JIT compiles each module once, at load.
    jits = {"java-threads", "node-eventloop"}
    assert {name for name, spec in all_servers().items() if spec.compiles_at_run_time} == jits
    servers = [ServerEntry("go-nethttp", label="go"), ServerEntry("java-threads", label="java")]

    def bounds(mode, **durations):
        load = Load(mode=mode, route="/json", connections=[8]) if mode == "closed" else \
            Load(mode="open", route="/json", connections=[1], rate_rps=[100.0])
        experiment = Experiment(name="jit", servers=servers, load=load,
                                durations=Durations(warmup_s=2, duration_s=5, **durations)).validate()
        return {c["label"]: (c["config"].warmup_s, c["config"].warmup_max_s) for c in experiment.conditions()}

    assert bounds("closed", warmup_max_s=6, jit_warmup_max_s=12) == {"go": (2, 6), "java": (2, 12)}
    assert bounds("closed", warmup_max_s=6) == {"go": (2, 6), "java": (2, 6)}
    # An open loop has no steadiness test: its warm-up is a fixed length, the JIT allowance for a JVM.
    assert bounds("open", warmup_max_s=6, jit_warmup_max_s=12) == {"go": (2, 2), "java": (12, 12)}
    with pytest.raises(ParameterError, match="jit_warmup_max_s"):
        bounds("closed", warmup_max_s=6, jit_warmup_max_s=1)


def test_the_quick_plans_give_the_jvms_their_jit_allowance_and_no_one_else():
    from loadlab import plans

    warm_ups = {c["label"]: c["config"].warmup_max_s for c in plans.runtime_overhead("quick").conditions()}
    # Node's V8 compiles while it serves (loadlab.yaml: compiles_at_run_time); BEAM's JIT compiles when a module loads.
    assert warm_ups == {"go": 2, "java-platform": 12, "java-virtual": 12, "rust": 2, "swoole": 2, "python": 2,
                        "node": 12, "erlang": 2}
    open_loop = plans.runtime_overhead_latency("quick", {"go": 4000.0, "java-platform": 1500.0, "rust": 3000.0})
    assert {c["label"]: c["config"].warmup_s for c in open_loop.conditions()} == {"go": 2, "java-platform": 12,
                                                                                 "rust": 2}


def test_a_plan_change_in_warm_up_is_named_per_server_as_its_trials_get_it():
    """The JIT allowance moved into its own field: a run of JVMs alone warmed up as today's plan would; Go did not."""
    import dataclasses

    from loadlab import plans, study
    from loadlab.experiment import Durations
    from loadlab.manifest import Manifest

    plan = plans.runtime_overhead("quick")
    earlier = dataclasses.replace(plan, durations=Durations(warmup_s=2, warmup_max_s=12, duration_s=5))
    changes = study.plan_differences(plan, Manifest("run-1", plan.name, "complete", parameters=earlier.to_dict()))
    assert changes == [f"server {label}: warm-up 2-12 s -> 2 s" for label in ("go", "rust", "swoole", "python", "erlang")]
    pinning = plans.pinning("quick")
    earlier = dataclasses.replace(pinning, durations=Durations(warmup_s=2, warmup_max_s=12, duration_s=5))
    assert study.plan_differences(pinning, Manifest("run-1", pinning.name, "complete",
                                                    parameters=earlier.to_dict())) == []


def test_a_shown_condition_runs_fewer_trials_in_the_first_blocks_and_a_judged_one_its_full_count():
    """Issue 32's budget: conditions no verdict reads (a shown server, a shown level) get shown_trials."""
    servers = [ServerEntry("go-nethttp", label="go"), ServerEntry("rust-tokio", label="rust", shown=True)]
    experiment = Experiment(name="shown", servers=servers, trials_per_condition=6, shown_trials=3, seed=4,
                            load=Load(mode="closed", route="/json", connections=[10, 100], shown_levels=[100]),
                            durations=Durations(warmup_s=1, duration_s=2)).validate()
    schedule = experiment.schedule()
    counts = {name: sum(1 for row in schedule if row["condition"] == name) for name in {r["condition"] for r in schedule}}
    assert counts == {"go@c10": 6, "go@c100": 3, "rust@c10": 3, "rust@c100": 3}
    # Shown conditions sit in the first blocks, among the judged ones, not after them.
    assert max(row["block"] for row in schedule if row["condition"].startswith("rust")) == 3
    assert [row["trial"] for row in schedule] == list(range(1, len(schedule) + 1))
    # Without shown conditions the order is the one every earlier run recorded (config.interleave's).
    plain = Experiment(name="plain", servers=[ServerEntry("go-nethttp", label="go"), ServerEntry("rust-tokio", label="rust")],
                       trials_per_condition=6, shown_trials=3, seed=4, load=Load(mode="closed", route="/json", connections=[10]),
                       durations=Durations(warmup_s=1, duration_s=2)).validate()
    from loadlab.config import interleave
    assert [(r["block"] - 1, r["condition"]) for r in plain.schedule()] == interleave(["go@c10", "rust@c10"], 6, 4)


def test_shown_trials_above_the_judged_count_or_an_unknown_shown_level_is_refused():
    servers = [ServerEntry("go-nethttp", label="go")]
    with pytest.raises(ParameterError, match="shown_trials"):
        Experiment(name="x", servers=servers, trials_per_condition=3, shown_trials=6,
                   load=Load(mode="closed", route="/json", connections=[10])).validate()
    with pytest.raises(ParameterError, match="load.shown_levels"):
        Experiment(name="x", servers=servers, load=Load(mode="closed", route="/json", connections=[10],
                                                         shown_levels=[20])).validate()


def test_the_quick_plans_judge_with_six_trials_and_draw_the_rest_with_three():
    from loadlab import plans

    trials = {(c["label"], c["level"]): c["trials"] for c in plans.runtime_overhead("quick").conditions()}
    assert {label for (label, _), n in trials.items() if n == 6} == {"go", "java-platform", "rust"}
    assert {n for (label, _), n in trials.items() if label in ("node", "erlang", "python", "swoole")} == {3}
    s4 = {(c["label"], c["level"]): c["trials"] for c in plans.io_coroutines("quick").conditions()}
    # 04's shown conditions are context (Little's law reads their medians): plans.QUICK_CONTEXT_TRIALS.
    assert s4[("go", 400)] == s4[("swoole", 400)] == 6 and s4[("go", 40)] == s4[("rust", 400)] == 2


def test_the_keepalive_extension_reads_every_runtime_at_its_top_level_and_a_baseline_at_its_lowest():
    """The atlas reads every runtime's top-level trials (3 at quick); the lowest level is the baseline median it
    subtracts, context trials (2)."""
    from loadlab import plans

    trials = {(c["label"], c["level"]): c["trials"] for c in plans.runtime_overhead_keepalive("quick").conditions()}
    labels = {label for label, _ in trials}
    assert {"go", "java-platform", "node", "erlang", "swoole"} <= labels
    assert {trials[(label, 10000)] for label in labels} == {3}
    assert {trials[(label, 10)] for label in labels} == {plans.QUICK_CONTEXT_TRIALS}
    # Smoke and full keep their own counts: the context rule is quick's budget.
    assert {c["trials"] for c in plans.runtime_overhead_keepalive("full").conditions()} == {5}


def test_every_quick_ratio_family_gets_the_trials_its_exact_interval_needs():
    """Issue 32: cut waste before evidence. Each family's judged conditions at quick hold at least the trials a side
    its Bonferroni interval needs (stats.minimum_trials_for_shift_interval): S1's 9 need 6, S2's, S3's and S4's 5."""
    from loadlab import plans
    from loadlab.judgements import s1, s2, s3, s4
    from loadlab.stats.shift import minimum_trials_for_shift_interval

    need = {family.name: minimum_trials_for_shift_interval(family.confidence)
            for family in (s1.FAMILY, s2.FAMILY, s3.FAMILY, s4.FAMILY)}
    assert need == {"S1": 6, "S2": 5, "S3": 5, "S4": 5}
    assert plans.S2_IN_PROCESS["quick"]["repetitions"] >= need["S2"]
    judged = {"S1": [plans.runtime_overhead("quick"), plans.cpu_profiles("quick")],
              "S3": [plans.json_api("quick")], "S4": [plans.io_coroutines("quick")]}
    for family, experiments in judged.items():
        for experiment in experiments:
            counts = [c["trials"] for c in experiment.conditions() if not c["shown"]]
            assert counts and min(counts) >= need[family], (experiment.name, counts)
