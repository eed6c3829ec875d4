"""The server contract (servers/CONTRACT.md) as Python facts.

`tests/test_contract.py` checks that these constants and CONTRACT.md say the
same thing, so the document and the verifier cannot drift apart.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

CONTRACT_VERSION = 1

PLAINTEXT_BODY = b"Hello, World!"
JSON_BODY = b'{"message":"Hello, World!"}'
# S1's answer was 200 bytes (claims.yaml, S1's setup): "0123456789" twenty times.
PLAINTEXT_200_BODY = b"0123456789" * 20

_UINT64_MASK = (1 << 64) - 1
CPU_HASH_SEED = 0xCBF29CE484222325

# Connections a server's listening socket may hold completed but not yet accepted (listen(2)'s backlog; the
# kernel caps it at net.core.somaxconn, 4,096 here). The runtimes' own defaults differ (Go asks for somaxconn,
# tokio 1,024, uvicorn 2,048, Node.js 511, Java's HttpServer 50): under a connection per request a burst past
# the queue costs each dropped client a one-second SYN retransmission, so every server asks for the same.
LISTEN_BACKLOG = 4096

IO_MS_MAX = 10_000
CPU_N_MAX = 10_000_000


@dataclass(frozen=True)
class IntegerParameter:
    """A query parameter holding a non-negative integer with an upper bound."""

    name: str
    maximum: int


ROUTE_PARAMETERS: dict[str, tuple[IntegerParameter, ...]] = {
    "/plaintext": (),
    "/plaintext200": (),
    "/json": (),
    "/api/users": (),
    "/io": (IntegerParameter("ms", IO_MS_MAX),),
    "/cpu": (IntegerParameter("n", CPU_N_MAX),),
    "/mixed": (IntegerParameter("cpu", CPU_N_MAX), IntegerParameter("io", IO_MS_MAX)),
    "/health": (),
}
ROUTES = tuple(ROUTE_PARAMETERS)
# Routes a load generator may target (health is for the harness).
LOAD_ROUTES = tuple(r for r in ROUTES if r != "/health")

TEXT_ROUTES = ("/plaintext", "/plaintext200")
ROUTE_MEDIA_TYPES = {
    **{route: "text/plain" for route in TEXT_ROUTES},
    **{route: "application/json" for route in ROUTES if route not in TEXT_ROUTES},
}

HEALTH_KEYS = {
    "server": str,
    "runtime": str,
    "runtime_version": str,
    "model": str,
    "settings": dict,
    "contract": int,
}

_USERS = (
    (1, "Ada Lovelace", 36, True),
    (2, "Alan Turing", 41, True),
    (3, "Grace Hopper", 85, False),
    (4, "Edsger Dijkstra", 72, True),
    (5, "Barbara Liskov", 86, True),
    (6, "Donald Knuth", 88, False),
    (7, "Margaret Hamilton", 90, True),
    (8, "Ken Thompson", 83, True),
    (9, "Frances Allen", 88, False),
    (10, "Dennis Ritchie", 70, True),
)
USERS = tuple(
    {
        "id": user_id,
        "name": name,
        "email": name.lower().replace(" ", ".") + "@example.com",
        "age": age,
        "active": active,
    }
    for user_id, name, age, active in _USERS
)

CPU_TEST_VECTORS = {
    0: 14695981039346656037,
    1: 4156492551529958947,
    2: 278897846428681918,
    3: 6555612005006764081,
    10: 7708545552399661815,
    1000: 13253976860997364882,
    100000: 1508644155094704437,
    1000000: 16349668788851284727,
}


def compact_json(value: object) -> bytes:
    """Serialize as the contract does: no white space, keys in given order."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def cpu_hash(rounds: int) -> int:
    """The contract's /cpu loop: `rounds` xorshift rounds over a uint64 state."""
    x = CPU_HASH_SEED
    for i in range(rounds):
        x ^= i
        x ^= (x << 13) & _UINT64_MASK
        x ^= x >> 7
        x ^= (x << 17) & _UINT64_MASK
    return x


def users_body() -> bytes:
    return compact_json(list(USERS))


def cpu_body(rounds: int) -> bytes:
    return b'{"n":%d,"hash":"%d"}' % (rounds, cpu_hash(rounds))


def io_body(milliseconds: int) -> bytes:
    return b'{"io_ms":%d}' % milliseconds


def mixed_body(rounds: int, milliseconds: int) -> bytes:
    return b'{"n":%d,"hash":"%d","io_ms":%d}' % (rounds, cpu_hash(rounds), milliseconds)


def error_body(message: str) -> bytes:
    return compact_json({"error": message})


def missing_message(parameter: str) -> str:
    return f"parameter {parameter} is required"


def not_integer_message(parameter: str) -> str:
    return f"parameter {parameter} must be a non-negative integer"


def above_bound_message(parameter: str, maximum: int) -> str:
    return f"parameter {parameter} must be at most {maximum}"


NOT_FOUND_BODY = error_body("not found")
METHOD_NOT_ALLOWED_BODY = error_body("method not allowed")
QUEUE_FULL_BODY = error_body("queue full")


def expected_body(route: str, query: dict[str, int] | None = None) -> bytes | None:
    """The exact 200 body for a route and valid query, or None for /health."""
    query = query or {}
    if route == "/plaintext":
        return PLAINTEXT_BODY
    if route == "/plaintext200":
        return PLAINTEXT_200_BODY
    if route == "/json":
        return JSON_BODY
    if route == "/api/users":
        return users_body()
    if route == "/io":
        return io_body(query["ms"])
    if route == "/cpu":
        return cpu_body(query["n"])
    if route == "/mixed":
        return mixed_body(query["cpu"], query["io"])
    if route == "/health":
        return None
    raise KeyError(route)


def validate_route(path_and_query: str) -> tuple[str, dict[str, int]]:
    """Split a target such as '/cpu?n=1000' and check it against the contract.

    Returns (route, parameters). Raises ParameterError naming `route` when the
    path or its parameters are outside the contract.
    """
    from urllib.parse import parse_qsl, urlsplit

    from loadlab.errors import ParameterError

    parts = urlsplit(path_and_query)
    route = parts.path
    if route not in ROUTE_PARAMETERS:
        raise ParameterError("route", path_and_query, "a contract route: " + ", ".join(LOAD_ROUTES))
    given: dict[str, str] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        given.setdefault(key, value)
    values: dict[str, int] = {}
    for parameter in ROUTE_PARAMETERS[route]:
        raw = given.get(parameter.name, "")
        if not raw.isascii() or not raw.isdigit() or int(raw) > parameter.maximum:
            raise ParameterError(
                "route",
                path_and_query,
                f"{route} with {parameter.name} an integer from 0 to {parameter.maximum}",
            )
        values[parameter.name] = int(raw)
    return route, values
