"""The microbenchmark image (one per JDK, built from microbench-programs/) and the programs' command lines."""

from __future__ import annotations

from pathlib import Path

import docker

from loadlab import paths
from loadlab.errors import ParameterError
from loadlab.harness import images
from loadlab.servers import get_server

MICROBENCH_DIR: Path = paths.ROOT / "microbench-programs"
IMAGE_REPOSITORY = "loadlab/microbench"
ROLE = "microbench"
USER = "10001:10001"
# The JDKs are servers/java-threads' own (its loadlab.yaml variants, build
# arguments and all), so the two images share their JDK layer and a claim
# about a JDK is measured on the same JDK in both.
JAVA_SERVER = "java-threads"

DEFAULT_MEMORY_LIMIT_BYTES = 2 * 1024**3
DEFAULT_TIMEOUT_S = 600.0
MODELS = ("platform", "virtual")
BENCHES = ("sleepers", "sqrt_latch", "switches")
# Conditions as claims.yaml names them.
CONDITIONS = ("go", "java-platform", "java-virtual")
MAX_TASKS = 1_000_000


def image_tag(jdk: str = "21") -> str:
    jdk = _check_jdk(jdk)
    return f"{IMAGE_REPOSITORY}:jdk{jdk}"


def jdk_build_args() -> dict[str, dict[str, str]]:
    """JDK feature version ("21", "25") -> the build arguments of java-threads' variant with that JDK."""
    return {args["JDK_VERSION"]: dict(args) for args in get_server(JAVA_SERVER).variants.values()}


def _check_jdk(jdk) -> str:
    jdk = str(jdk)
    available = jdk_build_args()
    if jdk not in available:
        raise ParameterError("jdk", jdk, tuple(sorted(available)))
    return jdk


def build(
    client: docker.DockerClient,
    jdk: str = "21",
    rebuild: bool = False,
    ca_bundle: Path | None = None,
    log=print,
) -> str:
    """Build `loadlab/microbench:jdk<jdk>` unless it is current; returns the tag.

    Current means, as for the server images (`images.ensure_image`), that the
    image's build-hash label equals the hash of today's inputs: an edit to
    microbench-programs/ rebuilds it on the next run.
    """
    tag = image_tag(jdk)
    images.ensure_base_image(client, log)
    build_args = jdk_build_args()[_check_jdk(jdk)]  # Go's pin is the Dockerfile's GO_VERSION
    ca_bundle = ca_bundle if ca_bundle is not None else images.ca_bundle_path()
    wanted = images.build_inputs_hash(MICROBENCH_DIR, build_args, ca_bundle, {}, client.images.get(images.BASE_IMAGE).id)
    if not rebuild and images.image_build_hash(client, tag) == wanted:
        return tag
    log(f"building {tag}")
    images.build_image(client, MICROBENCH_DIR, tag, build_args, ca_bundle=ca_bundle, log=log,
                       labels={images.BUILD_HASH_LABEL: wanted})
    return tag


# --- commands -------------------------------------------------------------------------------


def _check_int(name: str, value, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ParameterError(name, value, f"an integer from {low} to {high}")
    return value


def go_command(tasks: int, iterations: int = 1) -> list[str]:
    """spawn-go's command line: `tasks` goroutines parked, measured, released, joined."""
    _check_int("tasks", tasks, 1, MAX_TASKS)
    _check_int("iterations", iterations, 1, 100)
    return ["spawn-go", "--tasks", str(tasks), "--iterations", str(iterations)]


def java_command(
    model: str,
    bench: str = "sleepers",
    tasks: int = 10_000,
    warmup: int | None = None,
    iterations: int | None = None,
    sleep_ms: int | None = None,
) -> list[str]:
    """spawn-java's command line. None leaves the program's default (README.md)."""
    if model not in MODELS:
        raise ParameterError("model", model, MODELS)
    if bench not in BENCHES:
        raise ParameterError("bench", bench, BENCHES)
    command = ["spawn-java", "--mode", model, "--bench", bench, "--tasks", str(_check_int("tasks", tasks, 1, MAX_TASKS))]
    if warmup is not None:
        command += ["--warmup", str(_check_int("warmup", warmup, 0, 1000))]
    if iterations is not None:
        command += ["--iterations", str(_check_int("iterations", iterations, 1, 1000))]
    if sleep_ms is not None:
        if bench != "switches":
            raise ParameterError("sleep_ms", sleep_ms, "None unless bench='switches'")
        command += ["--sleep-ms", str(_check_int("sleep_ms", sleep_ms, 0, 10_000))]
    return command


def condition_command(condition: str, bench: str, tasks: int, **options) -> list[str]:
    """The command for a claims.yaml condition: go, java-platform or java-virtual."""
    if condition == "go":
        if bench != "sleepers":
            raise ParameterError("bench", bench, "sleepers (the only Go benchmark)")
        return go_command(tasks, **options)
    if condition in ("java-platform", "java-virtual"):
        return java_command(condition.split("-", 1)[1], bench, tasks, **options)
    raise ParameterError("condition", condition, CONDITIONS)
