"""Docker or a plain cgroup: the plain mode's server runs pinned, limited, unprivileged and is cleaned up like a
container; `compare` measures every mode's instances, interleaved (real go-nethttp binary, real wrk)."""

import json
import os
import tempfile
from pathlib import Path

import pytest
from conftest import build_or_skip

from loadlab.harness import container, isolation

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def go_image(docker_client, loadgen_image):
    return build_or_skip(docker_client, "go-nethttp")


def _needs_cgroups():
    why = isolation.cgroups_unavailable()
    if why:
        pytest.skip(f"plain cgroups cannot be made here: {why}")


@pytest.mark.parametrize("no_aslr", [False, True])
def test_the_plain_server_runs_pinned_limited_unprivileged_and_leaves_nothing(docker_client, go_image, no_aslr):
    _needs_cgroups()
    workdir = Path(tempfile.mkdtemp())
    os.chmod(workdir, 0o755)
    binary = isolation.extract_binary(docker_client, go_image, workdir, "test-isolation")
    server = isolation.PlainServer(binary, "1", no_aslr=no_aslr, user=(10001, 10001))
    try:
        server.wait_healthy()
        status = Path(f"/proc/{server.process.pid}/status").read_text()
        assert "Cpus_allowed_list:\t1\n" in status
        assert "Uid:\t10001\t10001" in status
        _, body = container.http_get(server.url("/health"))
        assert json.loads(body)["settings"]["GOMAXPROCS"] == 1  # the runtime saw one CPU from its first instant
        limits = [d / name for d in server.cgroup.directories for name in ("memory.limit_in_bytes", "memory.max")
                  if (d / name).exists()]
        assert limits and int(limits[0].read_text()) == isolation.MEMORY_LIMIT_BYTES
        personality = Path(f"/proc/{server.process.pid}/personality").read_text().strip()
        assert (int(personality, 16) & 0x0040000 != 0) == no_aslr  # ADDR_NO_RANDOMIZE
    finally:
        server.close()
    assert server.process.poll() is not None
    assert not any(directory.exists() for directory in server.cgroup.directories)
    assert container.refuses_connections("127.0.0.1", server.port)


def test_compare_measures_every_modes_instances_interleaved(docker_client, go_image):
    _needs_cgroups()
    windows = isolation.compare(docker_client, instances=2, windows=2, window_s=1, warmup_s=0, log=lambda m: None)
    assert sorted(windows["mode"].unique()) == sorted(isolation.MODES)
    assert len(windows) == len(isolation.MODES) * 2 * 2
    assert (windows["throughput_rps"] > 1000).all() and (windows["errors_total"] == 0).all()
    # Each window says how much of each side's CPUs the hypervisor took while it ran.
    assert windows["server_cpu_steal_share"].between(0, 1).all() and windows["loadgen_cpu_steal_share"].between(0, 1).all()
    print(windows.groupby("mode")["throughput_rps"].median())
    leftovers = [c.name for c in docker_client.containers.list(all=True)
                 if c.labels.get(container.RUN_LABEL, "").startswith("isolation-")]
    assert leftovers == []
