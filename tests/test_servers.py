"""Every server answers the contract and survives garbage (real images, real containers).

One case per server image variant (and per concurrency model where the
model is a knob). A server whose image cannot be built here is skipped with
the build's own reason (Swoole without a PECL package file).
"""

import pytest
from conftest import build_or_skip

from loadlab import servers
from loadlab.contract import fuzz, verify
from loadlab.harness import container
from loadlab.harness.session import ServerSession

pytestmark = pytest.mark.docker


def _cases():
    cases = []
    for name, spec in sorted(servers.all_servers().items()):
        for variant in sorted(spec.variants):
            models = spec.knobs["THREAD_MODEL"].choices if "THREAD_MODEL" in spec.knobs else (None,)
            for model in models:
                settings = {"THREAD_MODEL": model} if model else {}
                label = f"{name}:{variant}" + (f":{model}" if model else "")
                cases.append(pytest.param(name, variant, settings, id=label))
    return cases


@pytest.mark.parametrize("name, variant, settings", _cases())
def test_server_passes_every_contract_check_and_survives_garbage(docker_client, name, variant, settings):
    build_or_skip(docker_client, name, variant)
    spec = servers.get_server(name)
    with ServerSession.start(server=name, variant=variant, settings=settings, client=docker_client, build=False) as running:
        backlog = running.listen_backlog()
        assert backlog is not None, "the server's listen queue cannot be read here (host networking on this host)"
        checks = verify.verify_server(running.host, running.port, name, spec.routes, listen_backlog=backlog)
        failed = [f"{c.name}: {c.detail}" for c in checks if not c.passed]
        assert not failed, "\n".join(failed)
        assert "listen queue is the contract's" in [c.name for c in checks]
        health = running.health
        assert health["server"] == name and health["runtime"] == spec.runtime and health["runtime_version"]
        for knob, value in settings.items():
            assert str(health["settings"].get(knob)).lower() == value, f"/health does not report {knob}={value}"
        liveness = "/plaintext" if "/plaintext" in spec.routes else "/json"
        result = fuzz.run_fuzz(running.host, running.port, seed=7, max_requests=300, time_budget_s=12.0,
                               slow_connections=40, slow_hold_s=2.0, liveness_route=liveness)
        # After garbage it still answers the contract, not just something.
        again = verify.verify_server(running.host, running.port, name, spec.routes)
        assert all(c.passed for c in again), [c.name for c in again if not c.passed]
        run_id = running.run_id
    assert container.leftovers(docker_client, run_id) == []
    assert result.probes_failed == 0 and "answered 200" in result.liveness_detail, result.summary()
    if not result.slow.answered_while_held and (name, variant, settings.get("THREAD_MODEL")) == ("java-threads", "jdk21", "virtual"):
        # Measured, not assumed: with -Djdk.tracePinnedThreads the JVM reports
        # sun.net.httpserver.Request$ReadStream.read <== monitors:1, i.e. JDK 21's HttpServer
        # reads a request inside a monitor, so a half-sent request pins the server's one
        # carrier thread. JDK 25 (JEP 491) unmounts there and passes. See servers/java-threads/README.md.
        pytest.xfail("JDK 21 HttpServer pins virtual threads while reading half-sent requests (JEP 491 fixes it in 25)")
    assert result.alive and result.slow.answered_while_held, result.summary()
