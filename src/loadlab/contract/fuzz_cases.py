"""The fuzz's case catalogue: what garbage to send, deterministic in a seed.

    cases = generate_cases(seed=1, max_requests=400)

A fixed catalogue (random, unicode, %-escaped and very long paths; `?n=`
with 10,000 digits, `%zz`, a parameter repeated 10,000 times, NUL bytes; a
100 KB header value and 1,000 headers; broken request lines and HTTP
versions; bad framing; pipelined garbage) followed by seeded random
mutations of valid requests. Every case is bytes for one connection and
never more than MAX_PAYLOAD_BYTES. Garbage is never load: no case asks a
work route (/cpu, /io, /mixed) for a valid, expensive amount of work.

Nothing here touches a socket; `loadlab.contract.fuzz` sends the cases.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from urllib.parse import unquote_plus

from loadlab.contract import CPU_N_MAX, IO_MS_MAX
from loadlab.errors import ParameterError

MAX_PAYLOAD_BYTES = 256 * 1024  # no case sends more than this


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
    # The random parts are drawn first, in this order, so a seed gives the same cases as it always has.
    return (_path_cases(long_path) + _query_cases() + _header_cases() + _framing_cases()
            + _request_line_cases(tls_hello, junk) + _pipeline_cases(valid, junk))


def _path_cases(long_path: str) -> list[FuzzCase]:
    """The path's oddities: long, non-ASCII, escaped, NUL, control characters, dot segments, odd forms."""
    return [
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
    ]


def _query_cases() -> list[FuzzCase]:
    """Query strings: huge numbers, repeats, bad escapes, NUL, unicode digits, odd separators."""
    return [
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
    ]


def _header_cases() -> list[FuzzCase]:
    """Headers: huge values and names, malformed lines, missing or doubled Host, upgrades."""
    return [
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
    ]


def _framing_cases() -> list[FuzzCase]:
    """Bodies and their framing: bad or conflicting Content-Length, bad chunks, unknown encodings."""
    return [
    FuzzCase("framing: Content-Length -1", _request("/plaintext", method=b"POST", headers=b"Content-Length: -1\r\n")),
    FuzzCase("framing: Content-Length abc", _request("/plaintext", method=b"POST", headers=b"Content-Length: abc\r\n")),
    FuzzCase("framing: two Content-Lengths", _request("/plaintext", method=b"POST", headers=b"Content-Length: 1\r\nContent-Length: 2\r\n", body=b"xy")),
    FuzzCase("framing: Content-Length 20 digits", _request("/plaintext", method=b"POST", headers=b"Content-Length: 99999999999999999999\r\n", body=b"x")),
    FuzzCase("framing: Content-Length and chunked", _request("/plaintext", method=b"POST", headers=b"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n", body=b"0\r\n\r\n")),
    FuzzCase("framing: bad chunk size", _request("/plaintext", method=b"POST", headers=b"Transfer-Encoding: chunked\r\n", body=b"zz\r\nhello\r\n0\r\n\r\n")),
    FuzzCase("framing: unknown Transfer-Encoding", _request("/plaintext", method=b"POST", headers=b"Transfer-Encoding: gzip, identity\r\n", body=b"x")),
    FuzzCase("framing: GET with a 64 KB body", _request("/json", headers=b"Content-Length: 65536\r\n", body=b"b" * 65536)),
    ]


def _request_line_cases(tls_hello: bytes, junk: bytes) -> list[FuzzCase]:
    """Request lines and versions, and bytes that are not HTTP/1 at all."""
    return [
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
    ]


def _pipeline_cases(valid: bytes, junk: bytes) -> list[FuzzCase]:
    """Several requests in one payload, garbage among them."""
    return [
    FuzzCase("pipeline: 10 valid requests", valid * 10, requests=10, responses=10),
    FuzzCase("pipeline: valid, garbage, valid", valid + b"\x00\xff GARBAGE \r\n\r\n" + valid, requests=3, responses=3),
    FuzzCase("pipeline: 3 valid then random bytes", valid * 3 + junk[:256], requests=4, responses=4),
    FuzzCase("pipeline: valid then 100 KB header", valid + _request("/json", headers=b"X-Big: " + b"a" * 100_000 + b"\r\n"), requests=2, responses=2),
    FuzzCase("pipeline: 50 bad queries", b"".join(_request(f"/cpu?n={'9' * k}") for k in range(9, 59)), requests=50, responses=50),
    ]


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

