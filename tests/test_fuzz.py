"""The garbage fuzz: its case generator (deterministic, bounded), its response
parser, and whole runs against tiny in-process servers that live, die, or
fall to slow requests. One Docker test runs it against go-nethttp."""

from __future__ import annotations

import re
import socket
import threading
from urllib.parse import unquote_plus

import pytest

from loadlab.contract import CPU_N_MAX, IO_MS_MAX, fuzz, fuzz_cases
from loadlab.errors import ParameterError

# ---- the generator ----------------------------------------------------------


def test_the_same_seed_gives_the_same_cases_and_another_seed_others():
    first = fuzz_cases.generate_cases(7, 400)
    assert first == fuzz_cases.generate_cases(7, 400)
    assert [c.payload for c in first] != [c.payload for c in fuzz_cases.generate_cases(8, 400)]


@pytest.mark.parametrize("seed", [0, 1, 2, 99, 12345])
def test_cases_are_bounded_in_size_and_in_request_count(seed):
    cases = fuzz_cases.generate_cases(seed, 400)
    assert sum(c.requests for c in cases) == 400
    assert all(0 < len(c.payload) <= fuzz_cases.MAX_PAYLOAD_BYTES for c in cases)
    assert all(1 <= c.responses <= c.requests for c in cases)
    assert len({c.name for c in cases}) == len(cases)


def test_a_small_budget_is_a_prefix_of_the_catalogue_and_zero_is_nothing():
    assert fuzz_cases.generate_cases(1, 0) == []
    small = fuzz_cases.generate_cases(1, 5)
    assert sum(c.requests for c in small) == 5
    assert [c.name for c in small] == [c.name for c in fuzz_cases.generate_cases(1, 400)[:5]]
    with pytest.raises(ParameterError):
        fuzz_cases.generate_cases(1, -1)


def test_the_catalogue_tries_every_family_the_contract_names():
    cases = {c.name: c.payload for c in fuzz_cases.generate_cases(0, 400)}
    assert len(cases["path: 16 KB of random characters"]) > 16 * 1024
    assert "ü".encode() in cases["path: raw UTF-8"]
    assert b"n=" + b"9" * 10_000 in cases["query: n= with 10,000 digits"]
    assert cases["query: n=1 repeated 10,000 times"].count(b"n=1") == 10_000
    assert b"%zz" in cases["query: %zz"]
    assert b"\x00" in cases["query: raw NUL byte"]
    assert b"a" * 100_000 in cases["header: 100 KB value"]
    assert cases["header: 1,000 headers"].count(b"\r\nX-H") == 1000
    assert cases["line: HTTP/9.9"].startswith(b"GET /plaintext HTTP/9.9\r\n")
    assert cases["pipeline: 10 valid requests"].count(b"GET /plaintext HTTP/1.1") == 10
    assert any(name.startswith("random #") for name in cases)


def _work_values(payload: bytes):
    """Every value a lenient server could read for a work parameter of a work route."""
    for request in re.finditer(rb"/(io|cpu|mixed)\?([^ \r\n]*)", payload):
        for pair in re.split(rb"[&;]", request.group(2)):
            name, _, value = pair.partition(b"=")
            yield unquote_plus(name.decode("latin-1")).strip(), unquote_plus(value.decode("latin-1"))


@pytest.mark.parametrize("seed", range(40))
def test_no_case_asks_a_work_route_for_expensive_work(seed):
    # Garbage must not be load: /cpu?n=9999999 is seconds in an interpreter,
    # and would make a healthy single-threaded server look dead.
    limits = {"n": (10_000, CPU_N_MAX), "cpu": (10_000, CPU_N_MAX), "ms": (20, IO_MS_MAX), "io": (20, IO_MS_MAX)}
    for case in fuzz_cases.generate_cases(seed, 400):
        for name, value in _work_values(case.payload):
            digits = value.lstrip("0")
            if name in limits and value.isascii() and value.isdigit() and len(digits) <= 9:
                cheap, bound = limits[name]
                assert not cheap < int(digits or "0") <= bound, (case.name, name, value)


# ---- the response parser ----------------------------------------------------

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n\r\nHello, World!"
BAD = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\nConnection: close\r\n\r\nno"


def test_parser_splits_pipelined_responses_and_spots_partial_ones():
    assert fuzz.parse_responses(OK + BAD).statuses == [200, 400]
    partial = fuzz.parse_responses(OK + BAD[:-1])
    assert partial.statuses == [200] and partial.incomplete
    assert fuzz.parse_responses(OK[:20]).incomplete


def test_parser_handles_chunked_interim_and_until_close_bodies():
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n0\r\n\r\n"
    assert fuzz.parse_responses(chunked + OK).statuses == [200, 200]
    assert fuzz.parse_responses(b"HTTP/1.1 100 Continue\r\n\r\n" + OK).statuses == [100, 200]
    until_close = b"HTTP/1.0 200 OK\r\n\r\nbody"
    assert fuzz.parse_responses(until_close).incomplete
    assert fuzz.parse_responses(until_close, closed=True).statuses == [200]


def test_parser_flags_bytes_that_are_not_http():
    assert fuzz.parse_responses(b"\x15\x03\x03\x00\x02\x02\x46").non_http
    assert fuzz.parse_responses(b"HTTP/1.1 abc\r\n\r\n").non_http


# ---- whole runs against toy servers -----------------------------------------


class ToyServer:
    """A thread-per-connection HTTP server that answers everything with the
    /plaintext body; `die_on` bytes make it stop listening, `serial` makes it
    handle one connection at a time (so slow requests starve everyone)."""

    def __init__(self, die_on: bytes | None = None, serial: bool = False):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.die_on, self.serial = die_on, serial
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stopped.set()
        self.thread.join(timeout=5)
        self.listener.close()

    def _accept(self):
        while not self.stopped.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if self.serial:
                self._serve(connection)
            else:
                threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection):
        connection.settimeout(10)
        data = b""
        try:
            while b"\r\n\r\n" not in data and len(data) < 1 << 20:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                data += chunk
            if self.die_on is not None and self.die_on in data:
                self.stopped.set()
                self.listener.close()
                return
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nConnection: close\r\n\r\nHello, World!")
        except OSError:
            pass
        finally:
            connection.close()


QUICK = dict(max_requests=60, time_budget_s=8.0, slow_connections=5, slow_hold_s=0.5, probe_every=10)


def test_a_sturdy_server_is_alive_and_everything_is_counted():
    with ToyServer() as server:
        result = fuzz.run_fuzz("127.0.0.1", server.port, seed=3, **QUICK)
    assert result.alive, result.summary()
    assert result.requests_sent == 60 and result.cases_run == result.cases_planned
    assert result.responses.get("2xx", 0) > 0 and result.connect_failures == 0
    assert result.slow.opened == 5 and result.slow.answered_while_held
    assert result.probes_ok >= 1 and result.anomaly_count == 0
    assert result.elapsed_s < 8.0
    assert result.to_dict()["slow"]["answered_while_held"] is True
    assert "ALIVE" in result.summary()


def test_a_server_that_stops_listening_is_dead_and_the_case_is_named():
    with ToyServer(die_on=b"HTTP/9.9") as server:
        result = fuzz.run_fuzz("127.0.0.1", server.port, seed=3, **{**QUICK, "max_requests": 100})
    assert not result.alive
    assert result.dead_after is not None and result.probes_failed == 1
    assert any(a.kind == "probe-failed" for a in result.anomalies)
    assert "DEAD" in result.summary()


def test_a_server_that_slow_requests_starve_is_not_alive():
    with ToyServer(serial=True) as server:
        result = fuzz.run_fuzz("127.0.0.1", server.port, seed=3, **{**QUICK, "max_requests": 10})
    assert result.slow.probes_failed >= 1 and not result.slow.answered_while_held
    assert not result.alive


def test_nothing_listening_is_dead_at_once():
    port = socket.create_server(("127.0.0.1", 0)).getsockname()[1]  # closed again: nobody listens
    result = fuzz.run_fuzz("127.0.0.1", port, seed=0, **QUICK)
    assert not result.alive and result.connect_failures > 0 and result.requests_sent == 0


@pytest.mark.parametrize("host", ["10.0.0.1", "192.168.1.1", "example.com", "8.8.8.8"])
def test_only_loopback_is_ever_a_target(host):
    with pytest.raises(ParameterError, match="loopback"):
        fuzz.run_fuzz(host, 80)


def test_bad_arguments_are_refused_before_any_traffic():
    with pytest.raises(ParameterError):
        fuzz.run_fuzz("127.0.0.1", 1, liveness_route="/cpu")
    with pytest.raises(ParameterError):
        fuzz.run_fuzz("127.0.0.1", 1, slow_connections=10_000)


# ---- `loadlab verify --fuzz` -------------------------------------------------


class _Running:
    """What ServerSession.start yields, for a toy server already listening."""

    def __init__(self, port: int, routes=("/plaintext", "/json", "/health")):
        from types import SimpleNamespace

        self.host, self.port = "127.0.0.1", port
        self.spec = SimpleNamespace(name="toy", routes=routes)

    def listen_backlog(self):
        return None  # as for an engine elsewhere: the toy's listen queue is not the contract's business here

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _verify_cli(monkeypatch, capsys, port: int, *arguments: str) -> tuple[int, dict]:
    import json

    from loadlab import cli
    from loadlab.contract import verify
    from loadlab.harness import session

    # The container and the contract checks are the Docker test's business: here only the fuzz wiring.
    monkeypatch.setattr(session.ServerSession, "start", classmethod(lambda cls, **kwargs: _Running(port)))
    monkeypatch.setattr(verify, "verify_server", lambda host, port, name, routes, **checks: [])
    code = cli.main(["verify", "--server", "go-nethttp", "--json", "--fuzz", "--fuzz-requests", "60",
                     "--fuzz-time-budget", "8", *arguments])
    return code, json.loads(capsys.readouterr().out)


def test_verify_fuzz_passes_a_sturdy_server(monkeypatch, capsys):
    with ToyServer() as server:
        code, summary = _verify_cli(monkeypatch, capsys, server.port, "--fuzz-seed", "3")
    assert code == 0
    assert summary["passed"] and summary["fuzz"]["alive"] and summary["fuzz"]["seed"] == 3
    assert summary["fuzz"]["requests_sent"] == 60


def test_verify_fuzz_fails_a_server_the_fuzz_kills(monkeypatch, capsys):
    with ToyServer(die_on=b"HTTP/9.9") as server:
        code, summary = _verify_cli(monkeypatch, capsys, server.port, "--fuzz-requests", "100")
    assert code == 1
    assert summary["passed"] and not summary["fuzz"]["alive"] and summary["fuzz"]["dead_after"]


def test_the_liveness_route_is_plaintext_unless_the_server_lacks_it():
    assert fuzz.liveness_route_for(("/plaintext", "/json")) == "/plaintext"
    assert fuzz.liveness_route_for(("/json", "/health")) == "/json"


# ---- a real server -----------------------------------------------------------


@pytest.mark.docker
def test_go_nethttp_survives_the_fuzz(docker_client):
    from conftest import build_or_skip

    from loadlab.config import new_run_id
    from loadlab.harness import container
    from loadlab.harness.session import ServerSession

    build_or_skip(docker_client, "go-nethttp")
    run_id = new_run_id("test-fuzz")
    try:
        with ServerSession.start(server="go-nethttp", client=docker_client, run_id=run_id, build=False) as running:
            result = fuzz.run_fuzz(running.host, running.port, seed=1, time_budget_s=12.0)
            # The server is still running after all of it.
            assert container.describe_exit(running.container) is None
    finally:
        container.clean(docker_client, run_id)
    assert result.alive, result.summary()
    assert result.cases_run == result.cases_planned and not result.budget_exhausted
    assert result.slow.opened == 50 and result.slow.answered_while_held
    assert result.elapsed_s < 15.0
    # Go answers some garbage with 501/505: anomalies, never deaths.
    assert {a.kind for a in result.anomalies} <= {"5xx"}
    assert container.leftovers(docker_client, run_id) == []


@pytest.mark.docker
def test_loadlab_verify_fuzz_passes_go_nethttp(docker_client):
    import json
    import subprocess
    import sys

    from conftest import build_or_skip

    build_or_skip(docker_client, "go-nethttp")
    result = subprocess.run(
        [sys.executable, "-m", "loadlab.cli", "verify", "--server", "go-nethttp", "--fuzz", "--json"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = json.loads(result.stdout)
    assert summary["passed"] and summary["fuzz"]["alive"] and summary["fuzz"]["slow"]["answered_while_held"]
