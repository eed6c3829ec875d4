"""Declared schemas: servers/*/loadlab.yaml and experiments/*.yaml (and their Python form).

An unknown key, a missing required one or a value of the wrong type is a
ParameterError that names the path and what is allowed there.
"""

from pathlib import Path

import pytest
import yaml

from loadlab import contract, paths, schemas, servers
from loadlab.config import PROFILERS
from loadlab.errors import ParameterError
from loadlab.experiment import Experiment, Load, ServerEntry

MANIFESTS = sorted(paths.SERVERS_DIR.glob("*/loadlab.yaml")) + sorted((paths.ROOT / "tests" / "servers").glob("*/loadlab.yaml"))
EXPERIMENTS = sorted((paths.ROOT / "experiments").glob("*.yaml"))


def _raises(document, name: str) -> ParameterError:
    with pytest.raises(ParameterError) as caught:
        schemas.check(document, name)
    return caught.value


# ---- the schemas themselves ----------------------------------------------------


@pytest.mark.parametrize("name", schemas.SCHEMA_NAMES)
def test_the_schemas_are_valid_json_schemas(name):
    import jsonschema

    jsonschema.Draft202012Validator.check_schema(schemas.schema(name))


def test_the_schemas_name_the_routes_and_profilers_the_code_knows():
    server = schemas.schema("server")
    assert tuple(server["properties"]["routes"]["else"]["items"]["enum"]) == contract.ROUTES
    assert tuple(server["properties"]["profilers"]["items"]["enum"]) == PROFILERS
    assert tuple(schemas.schema("experiment")["properties"]["profilers"]["items"]["enum"]) == PROFILERS


def test_the_schemas_ship_inside_the_package():
    directory = Path(schemas.__file__).parent
    assert {p.name for p in directory.glob("*.schema.json")} == {f"{n}.schema.json" for n in schemas.SCHEMA_NAMES}
    pyproject = (paths.ROOT / "pyproject.toml").read_text()
    assert '"loadlab.schemas" = ["*.schema.json"]' in pyproject  # so `pip install .` ships them


@pytest.mark.parametrize("path", MANIFESTS + EXPERIMENTS, ids=lambda p: str(p.relative_to(paths.ROOT)))
def test_every_committed_file_fits_its_schema(path):
    schemas.check(yaml.safe_load(path.read_text()), "server" if path.name == "loadlab.yaml" else "experiment")


def test_paths_read_as_written():
    assert schemas.path_text(["servers", 1, "settings", "GOMAXPROCS"]) == "servers[1].settings.GOMAXPROCS"
    assert schemas.path_text(["load", "conections"]) == "load.conections"


# ---- server manifests ----------------------------------------------------------

GOOD_MANIFEST = {"runtime": "go", "model": "goroutine-per-connection", "routes": "all",
                 "knobs": {"WORKERS": {"integer": [1, 8], "default": "2", "help": "pool size"}}}


@pytest.mark.parametrize("change, parameter, allowed", [
    ({"runtme": "go"}, "runtme", "one of the known fields: build_inputs, compiles_at_run_time, contestant, default_variant"),
    ({"knobs": {"WORKERS": {"intger": [1, 8]}}}, "knobs.WORKERS.intger", "one of the known fields: choices, default, help, integer"),
    ({"knobs": {"WORKERS": {"choices": ["a"], "integer": [1, 8]}}}, "knobs.WORKERS", "at most one of choices or integer"),
    ({"knobs": {"workers": {}}}, "knobs", "an environment variable name"),
    ({"routes": ["/plaintext", "/nope"]}, "routes", "a list of the contract's routes"),
    ({"routes": "everything"}, "routes", '"all"'),
    ({"profilers": ["jfr", "dtrace"]}, "profilers", "pprof, go-metrics, gctrace, jfr, gclog, perf, py-spy, uprobes, jfr-locks"),
    ({"variants": {"jdk21": {"JDK_VERSION": ["21"]}}}, "variants.jdk21.JDK_VERSION", "a string or a number"),
    ({"build_inputs": {"THING": {"help": "a file"}}}, "build_inputs.THING.env", "environment variable"),
    ({"contestant": "no"}, "contestant", "true or false"),
])
def test_a_wrong_manifest_field_is_named_with_what_is_allowed(change, parameter, allowed):
    error = _raises({**GOOD_MANIFEST, **change}, "server")
    assert error.parameter == parameter
    assert allowed in error.allowed


def _write_server(root: Path, name: str, manifest: dict | str) -> Path:
    directory = root / name
    directory.mkdir(parents=True)
    text = manifest if isinstance(manifest, str) else yaml.safe_dump(manifest)
    (directory / "loadlab.yaml").write_text(text)
    return directory


def test_a_manifest_without_runtime_is_a_clear_error_naming_the_file(tmp_path):
    directory = _write_server(tmp_path, "no-runtime", {"model": "thread-per-request"})
    with pytest.raises(ParameterError) as caught:
        servers.load_spec(directory)
    assert caught.value.parameter == "runtime" and caught.value.value is None and caught.value.missing
    assert str(caught.value).startswith(f"{directory / 'loadlab.yaml'}: the field runtime is missing: runtime must be")
    assert "every server declares one" in str(caught.value)


def test_a_manifest_with_an_unknown_key_is_refused_on_reading(tmp_path):
    directory = _write_server(tmp_path, "typo", {**GOOD_MANIFEST, "knobs": {"WORKERS": {"defualt": "2"}}})
    with pytest.raises(ParameterError, match=r"knobs\.WORKERS\.defualt='2' is not allowed"):
        servers.load_spec(directory)


def test_a_default_variant_must_be_a_variant(tmp_path):
    directory = _write_server(tmp_path, "bad-default", {**GOOD_MANIFEST, "variants": {"jdk21": {}}, "default_variant": "jdk17"})
    with pytest.raises(ParameterError) as caught:
        servers.load_spec(directory)
    assert caught.value.parameter == "default_variant" and "jdk21" in caught.value.allowed


def test_a_manifest_that_is_not_a_mapping_or_not_yaml_is_named(tmp_path):
    with pytest.raises(ParameterError, match="manifest must be a mapping of fields"):
        servers.load_spec(_write_server(tmp_path, "empty", ""))
    with pytest.raises(ParameterError, match="valid YAML"):
        servers.load_spec(_write_server(tmp_path, "broken", "runtime: [go\n"))


def test_the_committed_manifests_still_read_as_before():
    spec = servers.get_server("java-threads")
    assert spec.runtime == "java" and spec.default_variant == "jdk21" and "THREAD_MODEL" in spec.knobs
    assert servers.get_server("nginx-baseline").routes == ("/plaintext", "/json", "/health")


# ---- experiments ---------------------------------------------------------------

BASE = {
    "name": "exp",
    "load": {"mode": "closed", "route": "/json", "connections": [8]},
    "durations": {"warmup_s": 1, "duration_s": 2},
    "servers": [{"server": "go-nethttp", "label": "a"}, {"server": "go-nethttp", "label": "b"}],
}


@pytest.mark.parametrize("document, parameter, allowed", [
    ({**BASE, "load": {"conections": [3]}}, "load.conections", "one of the known fields: capacity_basis, capacity_fractions, connection_mode, connections"),
    ({**BASE, "servers": [{"server": "go-nethttp", "setings": {}}]}, "servers[0].setings", "one of the known fields: capacity_rps, cpu_quota, label, profilers, route"),
    ({**BASE, "placement": {"server_cpus": 1}}, "placement.server_cpus", "a cpuset string"),
    ({**BASE, "load": {"connections": ["many"]}}, "load.connections", "a non-empty list of integers >= 1"),
    ({**BASE, "load": {"mode": "open", "rate_rps": []}}, "load.rate_rps", "a non-empty list of positive request rates"),
    ({**BASE, "servers": ["go-nethttp"]}, "servers[0]", "a mapping such as {server: go-nethttp}"),
    ({**BASE, "profilers": ["jfr", "dtrace"]}, "profilers", "each one of pprof"),
    ({key: value for key, value in BASE.items() if key != "name"}, "name", "1-64 characters"),
])
def test_a_wrong_experiment_field_is_named_with_what_is_allowed(document, parameter, allowed):
    with pytest.raises(ParameterError) as caught:
        Experiment.from_dict(document)
    assert caught.value.parameter == parameter
    assert allowed in caught.value.allowed


def test_an_unknown_knob_is_named_by_its_path():
    document = {**BASE, "servers": [{"server": "go-nethttp", "label": "a"},
                                     {"server": "go-nethttp", "label": "b", "settings": {"GOMAXPROC": 1}}]}
    with pytest.raises(ParameterError) as caught:
        Experiment.from_dict(document)
    assert caught.value.parameter == "servers[1].settings.GOMAXPROC"
    assert "GOMAXPROCS" in caught.value.allowed


def test_an_open_loop_needs_rates_not_connections():
    open_loop = {**BASE, "load": {"mode": "open", "route": "/json", "connections": [], "rate_rps": [50]}}
    assert Experiment.from_dict(open_loop).levels() == [50]


def test_the_python_form_is_checked_against_the_same_schema():
    experiment = Experiment(name="exp", servers=[ServerEntry("go-nethttp")], load=Load(connections=64))
    with pytest.raises(ParameterError) as caught:
        experiment.validate()
    assert caught.value.parameter == "load.connections"
    tuples_are_lists = Experiment(name="exp", servers=[ServerEntry("go-nethttp")], profilers=("pprof",))
    assert tuples_are_lists.validate() is tuples_are_lists


def test_a_misspelt_attribute_of_the_python_form_is_refused():
    experiment = Experiment.from_dict(BASE)
    with pytest.raises(ParameterError) as caught:
        experiment.profilrs = ["jfr"]
    assert caught.value.parameter == "Experiment.profilrs" and "profilers" in caught.value.allowed
    with pytest.raises(ParameterError, match="Load.conections"):
        experiment.load.conections = [3]
    experiment.seed = 9  # a field is still a field
    assert experiment.seed == 9
