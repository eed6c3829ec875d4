"""python-asyncio serves the loadlab contract (servers/CONTRACT.md) as a
plain ASGI 3 application on uvicorn, with uvloop's event loop and the
httptools parser. One event loop per worker process; every request is a
task on that loop, and /io yields to it with `await asyncio.sleep`.

No framework: the contract is seven exact paths, so a dict lookup is the
whole router, and every request skips the Request/Response objects and
middleware stack a framework would build.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import re
import time
from email.utils import formatdate
from importlib import metadata
from urllib.parse import unquote_to_bytes

SERVER_NAME = "python-asyncio"
MODEL = "asyncio-event-loop"
IO_MS_MAX = 10_000
CPU_N_MAX = 10_000_000
CPU_SEED = 0xCBF29CE484222325
MASK64 = (1 << 64) - 1

TEXT = b"text/plain"
JSON = b"application/json"

# One encoder, reused: compact separators, keys in insertion order.
_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False).encode

USERS = [
    {"id": 1, "name": "Ada Lovelace", "email": "ada.lovelace@example.com", "age": 36, "active": True},
    {"id": 2, "name": "Alan Turing", "email": "alan.turing@example.com", "age": 41, "active": True},
    {"id": 3, "name": "Grace Hopper", "email": "grace.hopper@example.com", "age": 85, "active": False},
    {"id": 4, "name": "Edsger Dijkstra", "email": "edsger.dijkstra@example.com", "age": 72, "active": True},
    {"id": 5, "name": "Barbara Liskov", "email": "barbara.liskov@example.com", "age": 86, "active": True},
    {"id": 6, "name": "Donald Knuth", "email": "donald.knuth@example.com", "age": 88, "active": False},
    {"id": 7, "name": "Margaret Hamilton", "email": "margaret.hamilton@example.com", "age": 90, "active": True},
    {"id": 8, "name": "Ken Thompson", "email": "ken.thompson@example.com", "age": 83, "active": True},
    {"id": 9, "name": "Frances Allen", "email": "frances.allen@example.com", "age": 88, "active": False},
    {"id": 10, "name": "Dennis Ritchie", "email": "dennis.ritchie@example.com", "age": 70, "active": True},
]


def cpu_hash(rounds: int) -> int:
    """The contract's xorshift loop. Python ints are unbounded, so each left
    shift is masked to 64 bits; >> on a non-negative int is already logical."""
    x = CPU_SEED
    for i in range(rounds):
        x ^= i
        x ^= (x << 13) & MASK64
        x ^= x >> 7
        x ^= (x << 17) & MASK64
    return x


_BAD_ESCAPE = re.compile(rb"%(?![0-9A-Fa-f]{2})")


def _decode(part: bytes) -> bytes:
    """URL query decoding ('+' is a space); a part with a malformed %-escape stays literal."""
    if b"%" not in part and b"+" not in part:
        return part
    if _BAD_ESCAPE.search(part):
        return part
    return unquote_to_bytes(part.replace(b"+", b" "))


def query_param(query: bytes, name: bytes) -> bytes | None:
    """The first value of `name` in a raw query string, URL-decoded.

    CONTRACT.md: pairs split on '&' only (';' belongs to the value), and a
    key or value with a malformed %-escape is kept literally. Scanning
    stops at the first match, so a parameter repeated 10,000 times costs
    one split.
    """
    for pair in query.split(b"&"):
        key, _, value = pair.partition(b"=")
        if _decode(key) != name:
            continue
        return _decode(value)
    return None


def int_param(query: bytes, name: str, maximum: int) -> tuple[int, str | None]:
    """(value, None) or (0, the contract's error message)."""
    raw = query_param(query, name.encode())
    if not raw:
        return 0, f"parameter {name} is required"
    if not raw.isdigit():  # bytes.isdigit is ASCII 0-9 only
        return 0, f"parameter {name} must be a non-negative integer"
    # All digits: only the magnitude can be wrong. Compare lengths before
    # int() so that a 10,000-digit value costs nothing.
    digits = raw.lstrip(b"0") or b"0"
    if len(digits) > len(str(maximum)) or int(digits) > maximum:
        return 0, f"parameter {name} must be at most {maximum}"
    return int(digits), None


_date_second = 0
_date_value = b""


def http_date() -> bytes:
    """The current time as an HTTP-date, formatted at most once a second.

    uvicorn's own Date header is off (see server.py): it is refreshed every
    tenth 100 ms tick of the event loop and captured when a request is
    parsed, so after a /cpu request blocks the loop for seconds, or while
    requests queue behind CPU work, it is seconds stale. This one is read
    when the response is sent.
    """
    global _date_second, _date_value
    now = int(time.time())
    if now != _date_second:
        _date_value = formatdate(now, usegmt=True).encode()
        _date_second = now
    return _date_value


async def respond(send, status: int, content_type: bytes, body: bytes, extra: tuple = ()) -> None:
    # Server comes from uvicorn's default headers (see server.py).
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"date", http_date()),
            (b"content-type", content_type),
            (b"content-length", str(len(body)).encode()),
            *extra,
        ],
    })
    await send({"type": "http.response.body", "body": body})


async def respond_json(send, status: int, value) -> None:
    await respond(send, status, JSON, _encode(value).encode())


async def bad_request(send, message: str) -> None:
    await respond_json(send, 400, {"error": message})


async def plaintext(scope, send) -> None:
    await respond(send, 200, TEXT, b"Hello, World!")


PLAINTEXT_200 = b"0123456789" * 20  # S1's 200-byte answer


async def plaintext200(scope, send) -> None:
    await respond(send, 200, TEXT, PLAINTEXT_200)


async def json_route(scope, send) -> None:
    await respond_json(send, 200, {"message": "Hello, World!"})


async def api_users(scope, send) -> None:
    await respond_json(send, 200, USERS)


async def io_route(scope, send) -> None:
    ms, problem = int_param(scope["query_string"], "ms", IO_MS_MAX)
    if problem:
        return await bad_request(send, problem)
    await asyncio.sleep(ms / 1000)
    await respond_json(send, 200, {"io_ms": ms})


async def cpu_route(scope, send) -> None:
    n, problem = int_param(scope["query_string"], "n", CPU_N_MAX)
    if problem:
        return await bad_request(send, problem)
    await respond_json(send, 200, {"n": n, "hash": str(cpu_hash(n))})


async def mixed_route(scope, send) -> None:
    query = scope["query_string"]
    n, problem = int_param(query, "cpu", CPU_N_MAX)
    if not problem:
        ms, problem = int_param(query, "io", IO_MS_MAX)
    if problem:
        return await bad_request(send, problem)
    digest = cpu_hash(n)
    await asyncio.sleep(ms / 1000)
    await respond_json(send, 200, {"n": n, "hash": str(digest), "io_ms": ms})


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


# Read once at import (in each worker process): they cannot change while it runs.
LIBRARIES = {name: _version(name) for name in ("uvicorn", "uvloop", "httptools")}


async def health(scope, send) -> None:
    import uvloop  # already loaded by uvicorn; the running loop's version

    await respond_json(send, 200, {
        "server": SERVER_NAME,
        "runtime": "python",
        "runtime_version": platform.python_version(),
        "model": MODEL,
        "settings": {
            "WORKERS": int(os.environ.get("WORKERS") or 1),
            "HOST": os.environ.get("HOST") or "0.0.0.0",
            "PORT": os.environ.get("PORT") or "8080",
        },
        "contract": 1,
        "implementation": platform.python_implementation(),
        "uvicorn": LIBRARIES["uvicorn"],
        "uvloop": uvloop.__version__,
        "httptools": LIBRARIES["httptools"],
        "loop": type(asyncio.get_running_loop()).__module__,
        "pid": os.getpid(),
        "cpu_count": os.cpu_count(),
        "cpus_available": len(os.sched_getaffinity(0)),
    })


ROUTES = {
    "/plaintext": plaintext,
    "/plaintext200": plaintext200,
    "/json": json_route,
    "/api/users": api_users,
    "/io": io_route,
    "/cpu": cpu_route,
    "/mixed": mixed_route,
    "/health": health,
}

ALLOW_GET = ((b"allow", b"GET"),)


async def app(scope, receive, send) -> None:
    """The ASGI 3 entry point."""
    if scope["type"] != "http":  # lifespan is off; nothing else is served
        return
    handler = ROUTES.get(scope["path"])
    if handler is None:
        return await respond_json(send, 404, {"error": "not found"})
    method = scope["method"]
    if method != "GET" and method != "HEAD":
        return await respond(send, 405, JSON, _encode({"error": "method not allowed"}).encode(), ALLOW_GET)
    await handler(scope, send)
