"""Image builds: the build CA bundle is trusted in build stages only."""

import io
import tarfile

import pytest

from loadlab import servers
from loadlab.harness import images

MARKER = "# loadlab-test-marker: this CA bundle must never reach a final image"


@pytest.mark.docker
def test_the_ca_bundle_never_lands_in_the_final_image(docker_client, tmp_path):
    host_bundle = images.ca_bundle_path()
    bundle = tmp_path / "bundle.crt"
    bundle.write_text((host_bundle.read_text() if host_bundle else "") + "\n" + MARKER + "\n")
    spec = servers.get_server("go-nethttp")
    tag = "loadlab-test/go-nethttp:ca-check"
    images.ensure_base_image(docker_client, log=lambda m: None)
    images.build_image(docker_client, spec.directory, tag, ca_bundle=bundle, log=lambda m: None)
    try:
        created = docker_client.containers.create(tag)
        try:
            archive = b"".join(created.export())
        finally:
            created.remove(force=True)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            for member in tar.getmembers():
                if member.isfile() and member.size < 50_000_000:
                    content = tar.extractfile(member).read()
                    assert MARKER.encode() not in content, f"{member.name} carries the build CA bundle"
    finally:
        docker_client.images.remove(tag, force=True)


def test_a_missing_ca_bundle_file_is_a_parameter_error():
    from loadlab.errors import ParameterError

    with pytest.raises(ParameterError, match="ca_bundle"):
        images.ca_bundle_path("/nonexistent/bundle.pem")
    assert images.ca_bundle_path("none") is None


def test_the_build_context_carries_the_bundle_and_build_inputs(tmp_path):
    bundle = tmp_path / "bundle.crt"
    bundle.write_text(MARKER)
    package = tmp_path / "thing-1.0.tgz"
    package.write_bytes(b"not really a package")
    spec = servers.get_server("go-nethttp")
    context = images._build_context(spec.directory, bundle, {"THING": package})
    with tarfile.open(fileobj=context) as tar:
        names = tar.getnames()
        assert tar.extractfile(images.BUILD_CONTEXT_CA_NAME).read().decode() == MARKER
    assert "Dockerfile" in names and "build-inputs/.keep" in names and "build-inputs/thing-1.0.tgz" in names


TEST_SERVERS = __import__("pathlib").Path(__file__).parent / "servers"


def _loadlab_build(*arguments, extra_env=None):
    import os
    import subprocess
    import sys

    env = {**os.environ, "LOADLAB_EXTRA_SERVER_DIRS": str(TEST_SERVERS), **(extra_env or {})}
    env.pop("LOADLAB_TEST_THING_PACKAGE", None)
    return subprocess.run([sys.executable, "-m", "loadlab.cli", "build", *arguments], capture_output=True, text=True,
                          env=env, timeout=600)


@pytest.mark.docker
def test_an_optional_image_without_its_input_is_skipped_with_its_reason_and_the_build_exits_0(docker_client, tmp_path):
    result = _loadlab_build("--server", "optional-input", "--keep-going", extra_env={"XDG_CACHE_HOME": str(tmp_path)})
    assert result.returncode == 0, result.stdout + result.stderr
    skipped = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skipped == ["SKIPPED loadlab/optional-input:latest (optional): the thing cannot be fetched here; "
                       "set LOADLAB_TEST_THING_PACKAGE"]
    # Asked again, it is reported once more without another failed build (remembered by build hash).
    again = _loadlab_build("--server", "optional-input", extra_env={"XDG_CACHE_HOME": str(tmp_path)})
    assert again.returncode == 0 and "SKIPPED loadlab/optional-input:latest" in again.stdout
    assert "building loadlab/optional-input" not in again.stdout + again.stderr


@pytest.mark.docker
def test_a_required_image_that_fails_fails_the_build_even_beside_a_skipped_optional_one(docker_client, tmp_path):
    result = _loadlab_build("--server", "optional-input", "--server", "broken-build", "--keep-going",
                            extra_env={"XDG_CACHE_HOME": str(tmp_path)})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "SKIPPED loadlab/optional-input:latest" in result.stdout
    assert "FAILED loadlab/broken-build:latest" in result.stderr and "broken on purpose" in result.stderr


def test_the_build_hash_follows_every_build_input(tmp_path):
    server = tmp_path / "server"
    server.mkdir()
    (server / "Dockerfile").write_text("FROM scratch\n")
    (server / "main.go").write_text("package main\n")
    bundle = tmp_path / "bundle.crt"
    bundle.write_text("a bundle")
    package = tmp_path / "thing.tgz"
    package.write_bytes(b"one")

    def build_hash(**changes):
        arguments = {"directory": server, "build_args": {"V": "1"}, "ca_bundle": bundle, "inputs": {"P": package},
                     "base_image_id": "sha256:base"}
        arguments.update(changes)
        return images.build_inputs_hash(**arguments)

    reference = build_hash()
    assert build_hash() == reference  # deterministic
    (server / "main.go").write_text("package main\n// one line more\n")
    edited = build_hash()
    assert edited != reference
    assert build_hash(build_args={"V": "2"}) != edited
    assert build_hash(base_image_id="sha256:other") != edited
    assert build_hash(ca_bundle=None) != edited
    package.write_bytes(b"two")
    assert build_hash() != edited
    # What a build never sees does not count.
    (server / "target").mkdir()
    (server / "target" / "binary").write_bytes(b"\x7fELF")
    assert build_hash() == build_hash()


class _FakeClient:
    def __init__(self, made):
        made.append(self)
        self.closed = False

    def close(self):
        self.closed = True


def test_builds_run_in_two_lanes_a_jobs_images_in_order_each_lane_with_a_client_of_its_own():
    """Two jobs overlap (each waits until the other has started), a job's images are built one after another,
    every job gets its own client and closes it, and an unavailable input is skipped, not failed."""
    import threading

    from loadlab.errors import BuildInputUnavailable

    both_started = threading.Barrier(2, timeout=10)
    order, clients = [], []

    def build(image):
        def run(client):
            assert isinstance(client, _FakeClient)
            order.append(image)
            if image in ("a1", "b1"):
                both_started.wait()  # raises BrokenBarrierError when the lanes do not overlap
            if image == "b2":
                raise BuildInputUnavailable("img:b2", "no package file")
            return f"img:{image}"
        return image, run

    jobs = [("a", [build("a1"), build("a2")]), ("b", [build("b1"), build("b2")])]
    failures, skipped = images.build_in_lanes(lambda: _FakeClient(clients), jobs, log=lambda m: None)
    assert failures == [] and [s.image for s in skipped] == ["img:b2"]
    assert order.index("a1") < order.index("a2") and order.index("b1") < order.index("b2")
    assert len(clients) == 2 and all(client.closed for client in clients)


def test_a_failed_build_without_keep_going_stops_the_lanes_from_starting_more_and_is_raised():
    from loadlab.errors import BuildError

    built = []

    def build(image):
        def run(client):
            built.append(image)
            if image == "a1":
                raise BuildError("a1 did not compile")
            return image
        return image, run

    jobs = [("a", [build("a1"), build("a2")]), ("b", [build("b1")]), ("c", [build("c1")])]
    with pytest.raises(BuildError, match="a1 did not compile"):
        images.build_in_lanes(lambda: _FakeClient([]), jobs, keep_going=False, lanes=1, log=lambda m: None)
    assert built == ["a1"]
    failures, _ = images.build_in_lanes(lambda: _FakeClient([]), jobs, keep_going=True, lanes=1, log=lambda m: None)
    assert failures == ["a1: a1 did not compile"] and built[1:] == ["a1", "a2", "b1", "c1"]
