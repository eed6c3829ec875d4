"""A bounded garbage fuzz for any server: does it survive bad HTTP?

    result = run_fuzz("127.0.0.1", port, seed=1)
    assert result.alive, result.summary()

From the command line: `loadlab verify --server NAME --fuzz` (a fresh
container, the contract checks, then this fuzz).

Three phases, all over raw sockets to a loopback address, every socket with
a timeout, the whole run inside `time_budget_s`:

1. **Garbage.** The cases of `loadlab.contract.fuzz_cases.generate_cases`
   (a fixed catalogue of malformed or hostile requests, then seeded random
   mutations; deterministic in `seed`, at most `max_requests` requests).
   Each is sent on its own connection and whatever comes back is read and
   classified. A normal request is probed every `probe_every` cases, so a
   death is pinned to the case before it.
2. **Slow requests.** `slow_connections` connections each send half a
   request line (and, half-way, a header fragment) and are held open for
   `slow_hold_s`; meanwhile normal requests on fresh connections must be
   answered correctly.
3. **Liveness.** GET `liveness_route` must answer 200 with the contract's
   exact body.

A status >= 500 to garbage is an anomaly (recorded, first few kept), not a
death; a server that stops answering normal requests is dead
(`alive=False`). Malformed HTTP may legitimately be answered with 4xx, by a
closed connection or a reset, or not at all (a server waiting for the rest
of a request): those are counted, not judged.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import time
from dataclasses import asdict, dataclass, field

from loadlab.contract import JSON_BODY, PLAINTEXT_BODY
from loadlab.contract.fuzz_cases import FuzzCase, generate_cases
from loadlab.errors import ParameterError

MAX_RESPONSE_BYTES = 1024 * 1024  # no case reads more than this back
CONNECT_TIMEOUT_S = 2.0
SEND_TIMEOUT_S = 2.0
READ_IDLE_TIMEOUT_S = 0.5  # silence after which a case counts as "no answer"
CASE_TIMEOUT_S = 3.0  # a case never takes longer than this
PROBE_TIMEOUT_S = 5.0
MAX_ANOMALIES = 10
MAX_SLOW_CONNECTIONS = 500
LIVENESS_BODIES = {"/plaintext": PLAINTEXT_BODY, "/json": JSON_BODY}


@dataclass(frozen=True)
class Anomaly:
    case: str
    kind: str  # "5xx", "non-http", "probe-failed", "liveness-failed", ...
    detail: str


@dataclass
class SlowResult:
    opened: int = 0
    closed_by_server: int = 0  # closed, reset or answered before the hold ended
    held_s: float = 0.0
    probes_ok: int = 0
    probes_failed: int = 0

    @property
    def answered_while_held(self) -> bool:
        return self.probes_ok >= 1 and self.probes_failed == 0


@dataclass
class FuzzResult:
    host: str
    port: int
    seed: int
    requests_sent: int = 0
    connections: int = 0
    cases_run: int = 0
    cases_planned: int = 0
    responses: dict[str, int] = field(default_factory=dict)  # "2xx".."5xx", "1xx"
    statuses: dict[int, int] = field(default_factory=dict)
    resets: int = 0
    timeouts: int = 0  # cases the server neither fully answered nor closed within the idle timeout
    closed_without_answer: int = 0
    connect_failures: int = 0
    probes_ok: int = 0
    probes_failed: int = 0
    slow: SlowResult = field(default_factory=SlowResult)
    alive: bool = False
    liveness_detail: str = ""
    dead_after: str | None = None  # the case after which a probe first failed
    anomaly_count: int = 0
    anomalies: list[Anomaly] = field(default_factory=list)
    elapsed_s: float = 0.0
    budget_exhausted: bool = False

    def note(self, case: str, kind: str, detail: str) -> None:
        self.anomaly_count += 1
        if len(self.anomalies) < MAX_ANOMALIES:
            self.anomalies.append(Anomaly(case, kind, detail[:200]))

    def to_dict(self) -> dict:
        out = asdict(self)
        out["statuses"] = {str(k): v for k, v in sorted(self.statuses.items())}
        out["slow"]["answered_while_held"] = self.slow.answered_while_held
        return out

    def summary(self) -> str:
        classes = ", ".join(f"{k}: {v}" for k, v in sorted(self.responses.items())) or "none"
        lines = [
            f"{'ALIVE' if self.alive else 'DEAD'} after {self.cases_run}/{self.cases_planned} cases, "
            f"{self.requests_sent} requests on {self.connections} connections in {self.elapsed_s:.1f} s (seed {self.seed})",
            f"  responses {classes}; resets {self.resets}, timeouts {self.timeouts}, "
            f"closed without answer {self.closed_without_answer}, connect failures {self.connect_failures}",
            f"  probes ok {self.probes_ok}, failed {self.probes_failed}; slow connections {self.slow.opened} held "
            f"{self.slow.held_s:.1f} s (server closed {self.slow.closed_by_server}), probes while held "
            f"ok {self.slow.probes_ok}, failed {self.slow.probes_failed}",
            f"  liveness: {self.liveness_detail}",
        ]
        if self.dead_after:
            lines.append(f"  first failed probe after case {self.dead_after!r}")
        lines += [f"  anomaly [{a.kind}] {a.case}: {a.detail}" for a in self.anomalies]
        if self.anomaly_count > len(self.anomalies):
            lines.append(f"  ... {self.anomaly_count - len(self.anomalies)} more anomalies")
        return "\n".join(lines)


# ---- reading answers --------------------------------------------------------


@dataclass
class ParsedResponses:
    statuses: list[int]
    non_http: bool = False  # bytes that are not an HTTP response
    incomplete: bool = False  # a response started but did not finish
    until_close: bool = False  # a response whose body runs to the connection's end


def parse_responses(data: bytes, closed: bool = False) -> ParsedResponses:
    """Split a byte stream into HTTP/1.x responses; returns their status codes.

    Interim 1xx responses are included. A response without Content-Length or
    chunking runs to the end of the stream and counts only when `closed`.
    """
    result = ParsedResponses([])
    at = 0
    while at < len(data):
        if not data.startswith(b"HTTP/", at):
            result.non_http = True
            return result
        end = data.find(b"\r\n\r\n", at)
        if end < 0:
            result.incomplete = True
            return result
        head = data[at:end].split(b"\r\n")
        fields = head[0].split(b" ", 2)
        try:
            status = int(fields[1])
        except (IndexError, ValueError):
            result.non_http = True
            return result
        length, chunked = None, False
        for line in head[1:]:
            name, _, value = line.partition(b":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == b"content-length" and value.isdigit():
                length = int(value)
            elif name == b"transfer-encoding" and b"chunked" in value:
                chunked = True
        at = end + 4
        if 100 <= status < 200 or status in (204, 304):
            result.statuses.append(status)
            continue
        if chunked:
            while True:
                line_end = data.find(b"\r\n", at)
                if line_end < 0:
                    result.incomplete = True
                    return result
                try:
                    size = int(data[at:line_end].split(b";")[0], 16)
                except ValueError:
                    result.non_http = True
                    return result
                at = line_end + 2 + size + 2
                if size == 0:
                    break  # (trailers are not expected from these servers)
            if at > len(data):
                result.incomplete = True
                return result
        elif length is not None:
            if at + length > len(data):
                result.incomplete = True
                return result
            at += length
        else:
            result.until_close = True
            if not closed:
                result.incomplete = True
                return result
            at = len(data)
        result.statuses.append(status)
    return result


def _final_count(parsed: ParsedResponses) -> int:
    return sum(1 for s in parsed.statuses if not 100 <= s < 200)


@dataclass
class _Outcome:
    statuses: list[int]
    sent: bool = False
    connected: bool = True
    reset: bool = False
    timed_out: bool = False
    closed: bool = False
    non_http: bytes = b""


def _exchange(host: str, port: int, case: FuzzCase) -> _Outcome:
    """Send one case on a fresh connection and read what comes back."""
    outcome = _Outcome([])
    try:
        sock = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S)
    except OSError:
        outcome.connected = False
        return outcome
    data = b""
    try:
        sock.settimeout(SEND_TIMEOUT_S)
        try:
            sock.sendall(case.payload)
            outcome.sent = True
        except (ConnectionResetError, BrokenPipeError):
            outcome.reset = True  # the server may have answered before closing: read it
        except TimeoutError:
            outcome.timed_out = True  # the server stopped reading (its buffers are full)
        sock.settimeout(READ_IDLE_TIMEOUT_S)
        deadline = time.monotonic() + CASE_TIMEOUT_S
        while time.monotonic() < deadline and len(data) < MAX_RESPONSE_BYTES:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                outcome.timed_out = True
                break
            except ConnectionResetError:
                outcome.reset = True
                break
            if not chunk:
                outcome.closed = True
                break
            data += chunk
            parsed = parse_responses(data)
            if parsed.non_http or (not parsed.incomplete and _final_count(parsed) >= case.responses):
                break
    except OSError:
        outcome.reset = True
    finally:
        sock.close()
    parsed = parse_responses(data, closed=outcome.closed or outcome.reset)
    outcome.statuses = parsed.statuses
    if parsed.non_http:
        outcome.non_http = data[:80]
    if outcome.statuses and not parsed.incomplete:
        outcome.timed_out = outcome.timed_out and _final_count(parsed) < case.responses
    return outcome


def _probe(host: str, port: int, route: str, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """A normal request; None when it is answered correctly, else what went wrong."""
    expected = LIVENESS_BODIES[route]
    connection = http.client.HTTPConnection(host, port, timeout=timeout_s)
    try:
        connection.request("GET", route, headers={"Connection": "close"})
        answer = connection.getresponse()
        body = answer.read(len(expected) + 1024)
        if answer.status != 200 or body != expected:
            return f"GET {route} answered {answer.status} {body[:80]!r}"
        return None
    except (OSError, http.client.HTTPException) as error:
        return f"GET {route}: {type(error).__name__}: {error}"
    finally:
        connection.close()


def _record(result: FuzzResult, case: FuzzCase, outcome: _Outcome) -> None:
    if not outcome.connected:
        result.connect_failures += 1
        return
    result.connections += 1
    result.requests_sent += case.requests if outcome.sent else 1
    for status in outcome.statuses:
        result.statuses[status] = result.statuses.get(status, 0) + 1
        label = f"{status // 100}xx" if 100 <= status < 600 else "other"
        result.responses[label] = result.responses.get(label, 0) + 1
        if status >= 500:
            result.note(case.name, "5xx", f"status {status}")
    if outcome.non_http:
        result.note(case.name, "non-http", f"answer starts {outcome.non_http!r}")
    if outcome.reset:
        result.resets += 1
    if outcome.timed_out:
        result.timeouts += 1
    if outcome.closed and not outcome.statuses:
        result.closed_without_answer += 1


# ---- slow requests ----------------------------------------------------------


def _slow_phase(host: str, port: int, result: FuzzResult, count: int, hold_s: float, route: str) -> None:
    slow = result.slow
    sockets: list[socket.socket] = []
    try:
        for i in range(count):
            try:
                sock = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S)
                sock.settimeout(SEND_TIMEOUT_S)
                sock.sendall(b"GET /plaint")  # half a request line, never finished
                sockets.append(sock)
            except OSError:
                result.connect_failures += 1
        slow.opened = len(sockets)
        result.connections += len(sockets)
        started = time.monotonic()
        trickled = False
        while True:
            elapsed = time.monotonic() - started
            if elapsed >= hold_s and slow.probes_ok + slow.probes_failed >= 1:
                break
            if not trickled and elapsed >= hold_s / 2:
                trickled = True  # a slowloris keeps the line busy with a byte now and then
                for sock in sockets:
                    try:
                        sock.sendall(b"ext HTTP/1.1\r\nX-a: b")
                    except OSError:
                        pass
            problem = _probe(host, port, route, timeout_s=min(PROBE_TIMEOUT_S, max(hold_s, 1.0)))
            if problem is None:
                slow.probes_ok += 1
            else:
                slow.probes_failed += 1
                result.note("slow connections", "probe-failed", f"while {len(sockets)} slow connections were held: {problem}")
            time.sleep(min(0.25, max(0.0, hold_s - (time.monotonic() - started))))
        slow.held_s = time.monotonic() - started
        # Which of them did the server give up on (closed, reset, or answered
        # with e.g. 408)? A read timeout is a fine defence; waiting is too.
        for sock in sockets:
            try:
                sock.setblocking(False)
                sock.recv(4096)
                slow.closed_by_server += 1
            except BlockingIOError:
                pass  # still open, still waiting for the rest
            except OSError:
                slow.closed_by_server += 1
    finally:
        for sock in sockets:
            sock.close()


# ---- the run ----------------------------------------------------------------


def _check_host(host: str) -> str:
    if host == "localhost":
        return "127.0.0.1"
    try:
        if ipaddress.ip_address(host).is_loopback:
            return host
    except ValueError:
        pass
    raise ParameterError("host", host, "a loopback address (127.0.0.0/8 or ::1): the fuzz never leaves this machine")


def liveness_route_for(routes) -> str:
    """The route a server's liveness is judged on: /plaintext, or /json where it serves no /plaintext."""
    return "/plaintext" if "/plaintext" in routes else "/json"


def run_fuzz(
    host: str = "127.0.0.1",
    port: int = 8080,
    seed: int = 0,
    max_requests: int = 400,
    time_budget_s: float = 12.0,
    slow_connections: int = 50,
    slow_hold_s: float = 3.0,
    liveness_route: str = "/plaintext",
    probe_every: int = 25,
    log=None,
) -> FuzzResult:
    """Fuzz the server at host:port (loopback only) and report whether it survived.

    The garbage phase gets what is left of `time_budget_s` after the slow
    phase (`slow_hold_s`) and the liveness check are set aside; cases that
    do not fit are skipped (`budget_exhausted`). Never raises for what the
    server does; raises ParameterError for bad arguments.
    """
    host = _check_host(host)
    if liveness_route not in LIVENESS_BODIES:
        raise ParameterError("liveness_route", liveness_route, sorted(LIVENESS_BODIES))
    if not 0 <= slow_connections <= MAX_SLOW_CONNECTIONS:
        raise ParameterError("slow_connections", slow_connections, f"an integer from 0 to {MAX_SLOW_CONNECTIONS}")
    if not 0 < slow_hold_s <= 30 or not 0 < time_budget_s <= 600:
        raise ParameterError("slow_hold_s/time_budget_s", (slow_hold_s, time_budget_s), "0 < hold <= 30 s, 0 < budget <= 600 s")
    log = log or (lambda message: None)
    started = time.monotonic()
    result = FuzzResult(host=host, port=port, seed=seed)
    cases = generate_cases(seed, max_requests)
    result.cases_planned = len(cases)
    reserve = (slow_hold_s + 1.0 if slow_connections else 0.0) + 2.0
    garbage_deadline = started + max(1.0, time_budget_s - reserve)

    log(f"fuzz {host}:{port}: {len(cases)} cases, seed {seed}")
    for index, case in enumerate(cases):
        if time.monotonic() + READ_IDLE_TIMEOUT_S > garbage_deadline:
            result.budget_exhausted = True
            break
        _record(result, case, _exchange(host, port, case))
        result.cases_run += 1
        if probe_every and (index + 1) % probe_every == 0:
            problem = _probe(host, port, liveness_route)
            if problem is None:
                result.probes_ok += 1
            else:
                result.probes_failed += 1
                result.dead_after = result.dead_after or case.name
                result.note(case.name, "probe-failed", problem)
                break  # no point feeding garbage to a server that stopped answering

    if slow_connections and not result.probes_failed:
        log(f"fuzz {host}:{port}: holding {slow_connections} slow connections for {slow_hold_s:.1f} s")
        _slow_phase(host, port, result, slow_connections, slow_hold_s, liveness_route)

    problem = _probe(host, port, liveness_route)
    if problem is not None:  # one retry: a server busy closing 50 sockets gets a second chance
        time.sleep(0.5)
        problem = _probe(host, port, liveness_route)
    if problem is None:
        result.liveness_detail = f"GET {liveness_route} answered 200 with the contract body"
    else:
        result.liveness_detail = problem
        result.note("liveness", "liveness-failed", problem)
        result.dead_after = result.dead_after or "the slow connections"
    result.alive = (
        problem is None
        and result.probes_failed == 0
        and (result.slow.answered_while_held or not slow_connections)
    )
    result.elapsed_s = time.monotonic() - started
    log(result.summary())
    return result

