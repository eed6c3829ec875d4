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
