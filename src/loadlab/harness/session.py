"""A running, healthy server container that is removed on every exit path.

    with ServerSession.start(server="go-nethttp") as running:
        ... running.host, running.port, running.health ...

Parameters are validated before the engine is touched; the container is
removed when the block ends, whether it returns, raises or is interrupted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from loadlab.config import check_cpu_period, check_cpusets, new_run_id, parse_cpuset
from loadlab.errors import ParameterError
from loadlab.harness import container, engine, images, tcp_diag
from loadlab.harness.phases import PhaseClock
from loadlab.servers import ServerSpec, get_server

HEALTH_TIMEOUT_S = 60.0


@dataclass
class ServerSession:
    spec: ServerSpec
    variant: str
    image: str
    settings: dict[str, str]
    placement: container.ServerPlacement
    run_id: str
    name: str
    client: object = None
    container: object = None
    port: int = 0
    health: dict = field(default_factory=dict)
    health_timeout_s: float = HEALTH_TIMEOUT_S
    started_unix_s: float | None = None
    # What the server printed, kept when its container is removed.
    last_log_tail: str = ""
    # Times the start (port, container create+start, health wait) and the removal; trial.json's phases_s.
    clock: PhaseClock = field(default_factory=PhaseClock)

    @property
    def host(self) -> str:
        return self.placement.host

    @classmethod
    def start(
        cls,
        server: str,
        variant: str | None = None,
        settings: dict[str, str] | None = None,
        cpuset: str = "1",
        memory_limit_bytes: int = 2 * 1024**3,
        cpu_quota: float | None = None,
        cpu_period_ms: float | None = None,
        run_id: str | None = None,
        name: str | None = None,
        build: bool = True,
        client=None,
        host: str = "127.0.0.1",
        check_host_cpus: bool = True,
        health_timeout_s: float = HEALTH_TIMEOUT_S,
    ) -> ServerSession:
        """Validate everything, then build if needed; the container starts on `__enter__`."""
        spec = get_server(server)
        variant = spec.check_variant(variant)
        checked = spec.check_settings(settings or {})
        check_cpusets(cpuset, check_host=check_host_cpus)
        if memory_limit_bytes < 16 * 1024**2:
            raise ParameterError("memory_limit_bytes", memory_limit_bytes, "at least 16 MiB")
        if cpu_quota is not None and not 0.01 <= cpu_quota <= len(parse_cpuset(cpuset, "server_cpus")):
            raise ParameterError("cpu_quota", cpu_quota, "between 0.01 and the number of CPUs in server_cpus")
        check_cpu_period(cpu_quota, cpu_period_ms)
        client = client or engine.ensure_engine()
        if build:
            image = images.ensure_image(client, spec, variant)
        else:
            image = spec.image(variant)
            if not images.image_exists(client, image):
                raise ParameterError("server", server, f"a built image ({image} is missing: run `loadlab build --server {server}`)")
        run_id = run_id or new_run_id("adhoc")
        placement = container.ServerPlacement(
            cpuset=cpuset, memory_limit_bytes=memory_limit_bytes, cpu_quota=cpu_quota, cpu_period_ms=cpu_period_ms,
            host=host
        )
        session = cls(spec, variant, image, checked, placement, run_id, name or f"loadlab-{run_id}-{spec.name}", client)
        session.health_timeout_s = health_timeout_s
        return session

    def __enter__(self) -> ServerSession:
        import time

        with self.clock.phase("server_port"):
            self.port = container.free_port(self.host)
        self.started_unix_s = time.time()
        try:
            with self.clock.phase("server_create_start"):
                self.container = container.start_server(
                    self.client, self.image, self.run_id, self.name, self.port, self.settings, self.placement
                )
            with self.clock.phase("health_wait"):
                self.health = container.wait_healthy(self.container, self.url("/health"), self.health_timeout_s)
        except BaseException:
            self.close()
            raise
        return self

    def url(self, target: str) -> str:
        return f"http://{self.host}:{self.port}{target}"

    def listen_backlog(self) -> int | None:
        """The bound of the server's listen queue (connections) as the kernel reports it; None where the server
        does not share this network namespace (tcp_diag.listen_backlog)."""
        return tcp_diag.listen_backlog(int(self.port), container.host_pid(self.container) or None)

    def close(self) -> None:
        """Remove the container, keeping what it printed (last_log_tail) for a failure record."""
        if self.container is not None:
            if not self.last_log_tail:
                with self.clock.phase("server_log_tail"):
                    self.last_log_tail = container.log_tail(self.container, lines=5000)
            with self.clock.phase("server_remove"):
                container.remove(self.container)

    def __exit__(self, *exc) -> None:
        self.close()
