"""The Swoole package route: php-swoole built from LOADLAB_SWOOLE_PACKAGE (PECL cannot be reached here).

With the variable naming a file, the image is built from it (or reused when
an image with the same build hash exists: the hash covers the package's
bytes, harness.images.build_inputs_hash), and the Swoole inside it is the
package's version. Without it the test skips with the reason below; the
other php-swoole tests keep their own skip (tests/conftest.build_or_skip).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from loadlab import servers
from loadlab.harness import images

VARIABLE = "LOADLAB_SWOOLE_PACKAGE"
PACKAGE = os.environ.get(VARIABLE, "")
SKIP_REASON = (f"{VARIABLE} does not name a file: set it to a Swoole PECL package (swoole-X.Y.Z.tgz, "
               "servers/php-swoole/README.md) to build php-swoole from it")


def test_the_skip_reason_names_the_variable_and_the_recipe():
    assert VARIABLE in SKIP_REASON and "servers/php-swoole/README.md" in SKIP_REASON
    assert servers.get_server("php-swoole").build_inputs == {"SWOOLE_PACKAGE": VARIABLE}


@pytest.mark.docker
@pytest.mark.skipif(not Path(PACKAGE).is_file(), reason=SKIP_REASON)
def test_php_swoole_builds_from_the_package_and_runs_its_version(docker_client):
    spec = servers.get_server("php-swoole")
    tag = images.ensure_image(docker_client, spec, log=lambda message: None)
    inputs = images.resolve_build_inputs(spec)
    assert inputs == {"SWOOLE_PACKAGE": Path(PACKAGE)}
    wanted = images.build_inputs_hash(spec.directory, {"SWOOLE_PACKAGE": "", **spec.variants["latest"]},
                                      images.ca_bundle_path(), inputs, docker_client.images.get(images.BASE_IMAGE).id)
    assert images.image_build_hash(docker_client, tag) == wanted
    # The extension PHP loads is the package's, not an older image's (a line without its newline never reaches the log).
    output = docker_client.containers.run(tag, ["-r", "echo SWOOLE_VERSION, PHP_EOL;"], entrypoint="php",
                                          remove=True, name="h32-swoole-package-version").decode().strip()
    packaged = re.search(r"swoole-(\d+\.\d+\.\d+)", Path(PACKAGE).name)
    assert output == (packaged.group(1) if packaged else output) and re.fullmatch(r"\d+\.\d+\.\d+", output)
