"""A bounded garbage fuzz for any server: does it survive bad HTTP?

    result = run_fuzz("127.0.0.1", port, seed=1)
    assert result.alive, result.summary()

Three phases, all over raw sockets to a loopback address, every socket with
a timeout, the whole run inside `time_budget_s`:

1. **Garbage.** `generate_cases(seed, max_requests)` makes a deterministic
   list of malformed or hostile requests: a fixed catalogue (random,
   unicode, %-escaped and very long paths; `?n=` with 10,000 digits, `%zz`,
   a parameter repeated 10,000 times, NUL bytes; a 100 KB header value and
   1,000 headers; broken request lines and HTTP versions; bad framing;
   pipelined garbage) followed by seeded random mutations of valid
   requests. Each is sent on its own connection and whatever comes back is
   read and classified. A normal request is probed every `probe_every`
   cases, so a death is pinned to the case before it.
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
import random
import re
import socket
import time
from dataclasses import asdict, dataclass, field
from urllib.parse import unquote_plus

from loadlab.contract import CPU_N_MAX, IO_MS_MAX, JSON_BODY, PLAINTEXT_BODY
from loadlab.errors import ParameterError

MAX_PAYLOAD_BYTES = 256 * 1024  # no case sends more than this
MAX_RESPONSE_BYTES = 1024 * 1024  # nor reads more than this back
CONNECT_TIMEOUT_S = 2.0
SEND_TIMEOUT_S = 2.0
READ_IDLE_TIMEOUT_S = 0.5  # silence after which a case counts as "no answer"
CASE_TIMEOUT_S = 3.0  # a case never takes longer than this
PROBE_TIMEOUT_S = 5.0
MAX_ANOMALIES = 10
MAX_SLOW_CONNECTIONS = 500
LIVENESS_BODIES = {"/plaintext": PLAINTEXT_BODY, "/json": JSON_BODY}


@dataclass(frozen=True)
class FuzzCase:
    """One connection's worth of bytes.

    `requests` is how many requests the payload holds (pipelined cases hold
    several); `responses` is how many complete answers to wait for at most.
    """

    name: str
    payload: bytes
    requests: int = 1
    responses: int = 1


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


# ---- case generation --------------------------------------------------------


def _request(target: bytes | str, host: bytes = b"127.0.0.1", headers: bytes = b"", method: bytes = b"GET",
             version: bytes = b"HTTP/1.1", body: bytes = b"") -> bytes:
    if isinstance(target, str):
        target = target.encode()
    return method + b" " + target + b" " + version + b"\r\nHost: " + host + b"\r\n" + headers + b"\r\n" + body


def _catalogue(rng: random.Random) -> list[FuzzCase]:
    """The named cases every run tries, in a fixed order (random parts from `rng`)."""
    unreserved = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"
    long_path = "/" + "".join(rng.choice(unreserved) for _ in range(16 * 1024))
    junk = bytes(rng.randrange(256) for _ in range(1024))
    tls_hello = bytes.fromhex("16030100a5010000a10303") + bytes(rng.randrange(256) for _ in range(160))
    valid = _request("/plaintext")
    cases = [
        # Paths.
        FuzzCase("path: 16 KB of random characters", _request(long_path)),
        FuzzCase("path: raw UTF-8", _request("/plaintext/ünïcödé/€/😀".encode())),
        FuzzCase("path: %-escaped UTF-8", _request("/%E2%82%AC%F0%9F%98%80/%C3%BC")),
        FuzzCase("path: invalid %-escapes", _request("/plain%zztext/%/%0/%G1")),
        FuzzCase("path: %00 and %ff%fe", _request("/plaintext%00/%ff%fe")),
        FuzzCase("path: raw NUL byte", _request(b"/plain\x00text")),
        FuzzCase("path: control characters", _request(b"/\x01\x02\x1b[31m\x7f")),
        FuzzCase("path: dot segments", _request("/../../../../etc/passwd")),
        FuzzCase("path: %2e%2e and %2f", _request("/%2e%2e/%2e%2e%2fetc%2fpasswd")),
        FuzzCase("path: double slashes", _request("//plaintext//")),
        FuzzCase("path: absolute-form", _request("http://127.0.0.1/plaintext")),
        FuzzCase("path: asterisk form", _request("*", method=b"OPTIONS")),
        FuzzCase("path: no leading slash", _request("plaintext")),
        # Query strings.
        FuzzCase("query: n= with 10,000 digits", _request("/cpu?n=" + "9" * 10_000)),
        FuzzCase("query: n= with 10,000 leading zeros", _request("/cpu?n=" + "0" * 10_000 + "7")),
        FuzzCase("query: io= with 10,000 digits", _request("/mixed?cpu=1&io=" + "1" * 10_000)),
        FuzzCase("query: %zz", _request("/io?ms=%zz")),
        FuzzCase("query: lone %", _request("/cpu?n=%")),
        FuzzCase("query: n=1 repeated 10,000 times", _request("/cpu?" + "&".join(["n=1"] * 10_000))),
        FuzzCase("query: n= repeated 10,000 times", _request("/cpu?" + "n=&" * 10_000)),
        FuzzCase("query: 10,000 other params then n", _request("/cpu?" + "x=1&" * 10_000 + "n=3")),
        FuzzCase("query: raw NUL byte", _request(b"/cpu?n=1\x00")),
        FuzzCase("query: %00", _request("/cpu?n=%00")),
        FuzzCase("query: unicode digits", _request("/cpu?n=%EF%BC%91%D9%A3")),
        FuzzCase("query: sign, space, hex, exponent", _request("/io?ms=-0&ms=+1&ms=%201&ms=0x10&ms=1e3")),
        FuzzCase("query: 60 KB value", _request("/json?x=" + "a" * 60_000)),
        FuzzCase("query: only ? and &", _request("/cpu?&&&&=&=&")),
        FuzzCase("query: semicolons", _request("/cpu?n=1;n=2;")),
        # Headers.
        FuzzCase("header: 100 KB value", _request("/plaintext", headers=b"X-Big: " + b"a" * 100_000 + b"\r\n")),
        FuzzCase("header: 1,000 headers", _request("/plaintext", headers=b"".join(b"X-H%d: v\r\n" % i for i in range(1000)))),
        FuzzCase("header: 100 KB name", _request("/plaintext", headers=b"X" * 100_000 + b": v\r\n")),
        FuzzCase("header: line without colon", _request("/plaintext", headers=b"NoColonHere\r\n")),
        FuzzCase("header: space before colon", _request("/plaintext", headers=b"X-Bad : v\r\n")),
        FuzzCase("header: obsolete line folding", _request("/plaintext", headers=b"X-Fold: a\r\n  b\r\n")),
        FuzzCase("header: NUL in value", _request("/plaintext", headers=b"X-Nul: a\x00b\r\n")),
        FuzzCase("header: no Host (HTTP/1.1)", b"GET /plaintext HTTP/1.1\r\n\r\n"),
        FuzzCase("header: two Hosts", _request("/plaintext", headers=b"Host: evil.example\r\n")),
        FuzzCase("header: Expect 100-continue, no body", _request("/plaintext", headers=b"Expect: 100-continue\r\n")),
        FuzzCase("header: Upgrade websocket", _request("/plaintext", headers=b"Connection: Upgrade\r\nUpgrade: websocket\r\n")),
        FuzzCase("header: Upgrade h2c", _request("/plaintext", headers=b"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n")),
        # Framing.
        FuzzCase("framing: Content-Length -1", _request("/plaintext", method=b"POST", headers=b"Content-Length: -1\r\n")),
        FuzzCase("framing: Content-Length abc", _request("/plaintext", method=b"POST", headers=b"Content-Length: abc\r\n")),
        FuzzCase("framing: two Content-Lengths", _request("/plaintext", method=b"POST", headers=b"Content-Length: 1\r\nContent-Length: 2\r\n", body=b"xy")),
        FuzzCase("framing: Content-Length 20 digits", _request("/plaintext", method=b"POST", headers=b"Content-Length: 99999999999999999999\r\n", body=b"x")),
        FuzzCase("framing: Content-Length and chunked", _request("/plaintext", method=b"POST", headers=b"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n", body=b"0\r\n\r\n")),
        FuzzCase("framing: bad chunk size", _request("/plaintext", method=b"POST", headers=b"Transfer-Encoding: chunked\r\n", body=b"zz\r\nhello\r\n0\r\n\r\n")),
        FuzzCase("framing: unknown Transfer-Encoding", _request("/plaintext", method=b"POST", headers=b"Transfer-Encoding: gzip, identity\r\n", body=b"x")),
        FuzzCase("framing: GET with a 64 KB body", _request("/json", headers=b"Content-Length: 65536\r\n", body=b"b" * 65536)),
        # Request lines and versions.
        FuzzCase("line: HTTP/9.9", _request("/plaintext", version=b"HTTP/9.9")),
        FuzzCase("line: HTTP/1.1.1", _request("/plaintext", version=b"HTTP/1.1.1")),
        FuzzCase("line: HTTP/2.0 in text", _request("/plaintext", version=b"HTTP/2.0")),
        FuzzCase("line: HTTX/1.1", _request("/plaintext", version=b"HTTX/1.1")),
        FuzzCase("line: lower-case version", _request("/plaintext", version=b"http/1.1")),
        FuzzCase("line: HTTP/0.9 style", b"GET /plaintext\r\n\r\n"),
        FuzzCase("line: method only", b"GET\r\n\r\n"),
        FuzzCase("line: empty lines only", b"\r\n\r\n\r\n\r\n"),
        FuzzCase("line: unknown method", _request("/plaintext", method=b"FROB")),
        FuzzCase("line: lower-case method", _request("/plaintext", method=b"get")),
        FuzzCase("line: 10 KB method", _request("/plaintext", method=b"G" * 10_000)),
        FuzzCase("line: double spaces", b"GET  /plaintext  HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
        FuzzCase("line: tabs", b"GET\t/plaintext\tHTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
        FuzzCase("line: LF line endings", b"GET /plaintext HTTP/1.1\nHost: 127.0.0.1\n\n"),
        FuzzCase("line: bare CR line endings", b"GET /plaintext HTTP/1.1\rHost: 127.0.0.1\r\r"),
        FuzzCase("line: CONNECT", _request("127.0.0.1:80", method=b"CONNECT")),
        FuzzCase("line: HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
        FuzzCase("line: TLS ClientHello", tls_hello),
        FuzzCase("line: 1 KB of random bytes", junk),
        FuzzCase("line: HTTP/1.0 keep-alive", _request("/json", version=b"HTTP/1.0", headers=b"Connection: keep-alive\r\n")),
        # Pipelining.
        FuzzCase("pipeline: 10 valid requests", valid * 10, requests=10, responses=10),
        FuzzCase("pipeline: valid, garbage, valid", valid + b"\x00\xff GARBAGE \r\n\r\n" + valid, requests=3, responses=3),
        FuzzCase("pipeline: 3 valid then random bytes", valid * 3 + junk[:256], requests=4, responses=4),
        FuzzCase("pipeline: valid then 100 KB header", valid + _request("/json", headers=b"X-Big: " + b"a" * 100_000 + b"\r\n"), requests=2, responses=2),
        FuzzCase("pipeline: 50 bad queries", b"".join(_request(f"/cpu?n={'9' * k}") for k in range(9, 59)), requests=50, responses=50),
    ]
    return cases


_ROUTES = ("/plaintext", "/json", "/api/users", "/io", "/cpu", "/mixed", "/health", "/nope", "/json/", "/")
# Routes whose work no query can make expensive: the only ones byte-level
# mutation starts from, so a flipped or duplicated digit can never turn
# into a valid /cpu?n=9999999 (seconds of work in an interpreter, which
# would make a healthy single-threaded server look dead).
_CHEAP_ROUTES = ("/plaintext", "/json", "/api/users", "/health", "/nope", "/json/", "/")
_PARAMS = {"/io": ("ms",), "/cpu": ("n",), "/mixed": ("cpu", "io")}
# A valid value above these is replaced by a small one: garbage, not load.
_CHEAP_LIMITS = {"n": 10_000, "cpu": 10_000, "ms": 20, "io": 20}
_BOUNDS = {"n": CPU_N_MAX, "cpu": CPU_N_MAX, "ms": IO_MS_MAX, "io": IO_MS_MAX}


def _cheap(name: str, value: str) -> str:
    """`value`, unless it is a valid and expensive value of `name`."""
    if name in _BOUNDS and value.isascii() and value.isdigit():
        number = int(value.lstrip("0") or "0") if len(value.lstrip("0")) <= 20 else _BOUNDS[name] + 1
        if _CHEAP_LIMITS[name] < number <= _BOUNDS[name]:
            return str(number % _CHEAP_LIMITS[name])
    return value


def _random_value(rng: random.Random) -> str:
    kind = rng.randrange(8)
    if kind == 0:
        return str(rng.randrange(0, 12))  # small and valid (cheap to serve)
    if kind == 1:
        return "9" * rng.randrange(1, 40)
    if kind == 2:
        return rng.choice(["-1", "+1", "1.5", "0x1f", "1e9", " 1", "1 ", "", "%", "%zz", "%00", "%2B1", "１"])
    if kind == 3:
        return "".join(rng.choice("0123456789%zZ+-&=;#?") for _ in range(rng.randrange(1, 30)))
    if kind == 4:
        return "0" * rng.randrange(1, 200) + str(rng.randrange(10))
    if kind == 5:
        return "%" + "".join(rng.choice("0123456789abcdefXYZ") for _ in range(rng.randrange(0, 4)))
    if kind == 6:
        return "".join(chr(rng.randrange(0x80, 0x3000)) for _ in range(rng.randrange(1, 8)))
    return str(rng.randrange(0, 10**rng.randrange(1, 25)))


def _expensive(query: str) -> bool:
    """Could any server read a valid, expensive work parameter from `query`?

    Deliberately lenient: pairs split on '&' and ';', '+' and %-escapes
    decoded, any occurrence (not just the first) counts.
    """
    for pair in re.split("[&;]", query):
        name, _, value = pair.partition("=")
        if _cheap(unquote_plus(name).strip(), unquote_plus(value)) != unquote_plus(value):
            return True
    return False


def _random_target(rng: random.Random, routes: tuple[str, ...] = _ROUTES) -> bytes:
    route = rng.choice(routes)
    parts = []
    for _ in range(rng.randrange(0, 5)):
        name = rng.choice(_PARAMS.get(route, ("x",)) + ("x", "ms", "n"))
        parts.append(f"{name}={_cheap(name, _random_value(rng))}")
    query = "&".join(parts)
    if route in _PARAMS and _expensive(query):
        route = "/nope"  # garbage values that happen to spell valid work: keep them off the work routes
    target = route + ("?" + query if parts or rng.random() < 0.2 else "")
    return target.encode("utf-8", "surrogateescape")


def _mutate(rng: random.Random, data: bytes) -> bytes:
    """Flip, insert, delete or duplicate a few bytes (keeps the size bounded)."""
    data = bytearray(data)
    for _ in range(rng.randrange(1, 4)):
        if not data:
            break
        at = rng.randrange(len(data))
        action = rng.randrange(5)
        if action == 0:
            data[at] = rng.randrange(256)
        elif action == 1:
            data[at:at] = bytes([rng.choice(b"\x00\r\n \t:%?/\x7f\xff")])
        elif action == 2:
            del data[at : at + rng.randrange(1, 8)]
        elif action == 3:
            data[at:at] = data[at : at + rng.randrange(1, 64)] * rng.randrange(1, 50)
        else:
            data[at:at] = b"\r\n"
    # Whatever the mutation did, the request ends with an empty line, so a
    # server waiting for the header block's end gets one.
    return bytes(data[: MAX_PAYLOAD_BYTES - 4]) + b"\r\n\r\n"


def _random_case(rng: random.Random, index: int) -> FuzzCase:
    family = rng.randrange(4)
    if family == 0:
        return FuzzCase(f"random #{index}: odd target", _request(_random_target(rng)))
    if family == 1:
        headers = b"".join(
            b"X-%d: %s\r\n" % (i, bytes(rng.choice(b"abc =;,\t\"\\") for _ in range(rng.randrange(0, 64))))
            for i in range(rng.randrange(1, 20))
        )
        return FuzzCase(f"random #{index}: odd headers", _request(_random_target(rng), headers=headers))
    if family == 2:
        return FuzzCase(f"random #{index}: mutated request", _mutate(rng, _request(_random_target(rng, _CHEAP_ROUTES))))
    count = rng.randrange(2, 6)
    payload = b"".join(
        _mutate(rng, _request(_random_target(rng, _CHEAP_ROUTES))) if rng.random() < 0.3 else _request(_random_target(rng))
        for _ in range(count)
    )
    return FuzzCase(f"random #{index}: pipelined", payload, requests=count, responses=count)


def generate_cases(seed: int, max_requests: int) -> list[FuzzCase]:
    """The cases of a run: deterministic in `seed`, at most `max_requests`
    requests in all, no payload above MAX_PAYLOAD_BYTES.

    The fixed catalogue comes first (so a short run still tries the
    classics), then seeded random cases fill the remaining request budget.
    """
    if max_requests < 0:
        raise ParameterError("max_requests", max_requests, "a non-negative integer")
    rng = random.Random(seed)
    cases: list[FuzzCase] = []
    total = 0
    for case in _catalogue(rng):
        if total + case.requests <= max_requests:
            cases.append(case)
            total += case.requests
    index = 0
    misses = 0
    while total < max_requests and misses < 20:
        case = _random_case(rng, index)
        index += 1
        if total + case.requests > max_requests:
            misses += 1
            continue
        cases.append(case)
        total += case.requests
    for case in cases:
        assert len(case.payload) <= MAX_PAYLOAD_BYTES, case.name
    return cases


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


def main(argv: list[str] | None = None) -> int:
    """`python -m loadlab.contract.fuzz --port P`: fuzz a server already running on loopback."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m loadlab.contract.fuzz", description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-requests", type=int, default=400)
    parser.add_argument("--time-budget", type=float, default=12.0, help="seconds")
    parser.add_argument("--slow-connections", type=int, default=50)
    parser.add_argument("--slow-hold", type=float, default=3.0, help="seconds")
    parser.add_argument("--route", default="/plaintext", choices=sorted(LIVENESS_BODIES))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run_fuzz(args.host, args.port, args.seed, args.max_requests, args.time_budget,
                      args.slow_connections, args.slow_hold, args.route)
    print(json.dumps(result.to_dict(), indent=2) if args.json else result.summary())
    return 0 if result.alive else 1


if __name__ == "__main__":
    raise SystemExit(main())
