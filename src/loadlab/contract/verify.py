"""Check a running server against servers/CONTRACT.md before any load.

Each check is one named rule with a pass/fail and, on failure, what was
expected and what came back. `verify_server` runs them all and never raises
on a contract violation: the caller decides (the CLI exits non-zero, a trial
records a failed verify).
"""

from __future__ import annotations

import email.utils
import http.client
import json
import socket
import time
from dataclasses import asdict, dataclass

from loadlab import contract
from loadlab.contract import (
    CPU_N_MAX,
    CPU_TEST_VECTORS,
    HEALTH_KEYS,
    METHOD_NOT_ALLOWED_BODY,
    NOT_FOUND_BODY,
    ROUTE_MEDIA_TYPES,
    above_bound_message,
    error_body,
    missing_message,
    not_integer_message,
)

DATE_TOLERANCE_S = 5.0
REQUEST_TIMEOUT_S = 15.0  # /cpu at its bound in an interpreter takes seconds


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str = ""


@dataclass(frozen=True)
class Response:
    status: int
    headers: http.client.HTTPMessage
    body: bytes
    elapsed_s: float


def request(host: str, port: int, method: str, target: str, timeout_s: float = REQUEST_TIMEOUT_S) -> Response:
    connection = http.client.HTTPConnection(host, port, timeout=timeout_s)
    try:
        started = time.monotonic()
        connection.request(method, target)
        answer = connection.getresponse()
        body = answer.read()
        return Response(answer.status, answer.msg, body, time.monotonic() - started)
    finally:
        connection.close()


def _media_type(response: Response) -> str:
    return (response.headers.get("Content-Type") or "").split(";")[0].strip().lower()


def header_problems(response: Response, expected_media_type: str) -> list[str]:
    """TechEmpower's header rules; returns what is wrong (empty when all is well)."""
    problems = []
    if not (response.headers.get("Server") or "").strip():
        problems.append("no Server header")
    dates = response.headers.get_all("Date") or []
    if len(dates) != 1:
        problems.append(f"{len(dates)} Date headers, expected 1")
    else:
        try:
            stamp = email.utils.parsedate_to_datetime(dates[0]).timestamp()
            if abs(stamp - time.time()) > DATE_TOLERANCE_S:
                problems.append(f"Date {dates[0]!r} is more than {DATE_TOLERANCE_S:.0f} s off")
        except (TypeError, ValueError):
            problems.append(f"Date {dates[0]!r} is not an HTTP-date")
    if _media_type(response) != expected_media_type:
        problems.append(f"Content-Type {response.headers.get('Content-Type')!r}, expected {expected_media_type}")
    length = response.headers.get("Content-Length")
    if length is None:
        problems.append("no Content-Length header")
    elif length.strip() != str(len(response.body)):
        problems.append(f"Content-Length {length} but the body has {len(response.body)} bytes")
    if "chunked" in (response.headers.get("Transfer-Encoding") or "").lower():
        problems.append("chunked transfer encoding")
    return problems


def _show(body: bytes, limit: int = 160) -> str:
    text = body[:limit].decode(errors="replace")
    return text + ("..." if len(body) > limit else "")


def check_answer(
    name: str, response: Response, status: int, body: bytes | None, media_type: str = "application/json"
) -> Check:
    problems = []
    if response.status != status:
        problems.append(f"status {response.status}, expected {status}")
    if body is not None and response.body != body:
        problems.append(f"body {_show(response.body)!r}, expected {_show(body)!r}")
    problems += header_problems(response, media_type)
    return Check(name, not problems, "; ".join(problems))


def check_health(response: Response, server_name: str) -> Check:
    problems = header_problems(response, "application/json")
    if response.status != 200:
        problems.append(f"status {response.status}")
    try:
        document = json.loads(response.body)
    except ValueError:
        return Check("GET /health", False, "body is not JSON: " + _show(response.body))
    for key, kind in HEALTH_KEYS.items():
        if not isinstance(document.get(key), kind):
            problems.append(f"key {key!r} missing or not {kind.__name__}")
    if document.get("server") != server_name:
        problems.append(f"server {document.get('server')!r}, expected {server_name!r}")
    if document.get("contract") != contract.CONTRACT_VERSION:
        problems.append(f"contract {document.get('contract')!r}, expected {contract.CONTRACT_VERSION}")
    return Check("GET /health", not problems, "; ".join(problems))


def _bad_parameter_cases(route: str) -> list[tuple[str, str]]:
    """(target, expected error message) for each way a parameter can be wrong."""
    parameters = contract.ROUTE_PARAMETERS[route]
    valid = {p.name: "1" for p in parameters}
    cases = []
    for parameter in parameters:
        def target(value: str | None, name: str = parameter.name) -> str:
            query = {**valid}
            if value is None:
                query.pop(name)
            else:
                query[name] = value
            return route + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")

        name, maximum = parameter.name, parameter.maximum
        cases += [
            (target(None), missing_message(name)),
            (target(""), missing_message(name)),
            (target("abc"), not_integer_message(name)),
            (target("-1"), not_integer_message(name)),
            (target("1.5"), not_integer_message(name)),
            (target("%2B3"), not_integer_message(name)),  # '+3' after URL decoding
            (target("0x10"), not_integer_message(name)),
            (target("1;x=2"), not_integer_message(name)),  # ';' is not a separator
            (target(str(maximum + 1)), above_bound_message(name, maximum)),
            (target("9" * 40), above_bound_message(name, maximum)),
        ]
    return cases


def verify_server(host: str, port: int, server_name: str, routes: tuple[str, ...], thorough: bool = True,
                  listen_backlog: int | None = None) -> list[Check]:
    """Run every contract check that applies to a server serving `routes`.

    `listen_backlog`: the bound of the server's listen queue as the kernel
    reports it (harness.tcp_diag.listen_backlog, where the server's network
    namespace is the caller's); checked against the contract when given.

    `thorough=False` (what a trial runs before its load) leaves out the two
    slow checks: that Date advances (a 1.1 s wait) and /cpu at its bound
    (seconds in an interpreter). `loadlab verify` and the test suite run all.
    """
    checks: list[Check] = []

    def add(name: str, method: str, target: str, status: int, body: bytes | None, media_type: str = "application/json"):
        try:
            response = request(host, port, method, target)
        except OSError as error:
            checks.append(Check(name, False, f"{method} {target}: {error}"))
            return None
        checks.append(check_answer(name, response, status, body, media_type))
        return response

    if "/health" in routes:
        try:
            checks.append(check_health(request(host, port, "GET", "/health"), server_name))
        except OSError as error:
            checks.append(Check("GET /health", False, str(error)))
    for route in ("/plaintext", "/plaintext200", "/json", "/api/users"):
        if route in routes:
            add(f"GET {route}", "GET", route, 200, contract.expected_body(route), ROUTE_MEDIA_TYPES[route])
    if "/api/users" in routes:
        response = request(host, port, "GET", "/api/users")
        try:
            same = json.loads(response.body) == list(contract.USERS)
        except ValueError:
            same = False
        checks.append(Check("GET /api/users is the ten users as JSON", same, "" if same else _show(response.body)))
    if "/cpu" in routes:
        for rounds, expected_hash in CPU_TEST_VECTORS.items():
            body = b'{"n":%d,"hash":"%d"}' % (rounds, expected_hash)
            add(f"GET /cpu?n={rounds} test vector", "GET", f"/cpu?n={rounds}", 200, body)
        add("GET /cpu?n=007 (leading zeros)", "GET", "/cpu?n=007", 200, contract.cpu_body(7))
        add("GET /cpu?n=5&n=9 (first occurrence counts)", "GET", "/cpu?n=5&n=9", 200, contract.cpu_body(5))
        if thorough:
            add(f"GET /cpu?n={CPU_N_MAX} (at the bound)", "GET", f"/cpu?n={CPU_N_MAX}", 200, None)
    if "/io" in routes:
        response = add("GET /io?ms=50", "GET", "/io?ms=50", 200, contract.io_body(50))
        if response is not None:
            waited = response.elapsed_s >= 0.045
            checks.append(Check("GET /io?ms=50 waits about 50 ms", waited, f"answered after {response.elapsed_s * 1000:.1f} ms"))
        add("GET /io?ms=0", "GET", "/io?ms=0", 200, contract.io_body(0))
    if "/mixed" in routes:
        add("GET /mixed?cpu=1000&io=5", "GET", "/mixed?cpu=1000&io=5", 200, contract.mixed_body(1000, 5))
        add(
            "GET /mixed?cpu=x&io=y (cpu is checked first)", "GET", "/mixed?cpu=x&io=y", 400,
            error_body(not_integer_message("cpu")),
        )
    for route in ("/io", "/cpu", "/mixed"):
        if route in routes:
            for target, message in _bad_parameter_cases(route):
                add(f"GET {target} -> 400", "GET", target, 400, error_body(message))
            checks.append(_check_malformed_escape(host, port, route))
    add("GET /no-such-path -> 404", "GET", "/no-such-path", 404, NOT_FOUND_BODY)
    known = next(r for r in ("/json", "/plaintext") if r in routes)
    add(f"GET {known}/ (trailing slash) -> 404", "GET", known + "/", 404, NOT_FOUND_BODY)
    for method in ("POST", "PUT", "DELETE"):
        response = add(f"{method} {known} -> 405", method, known, 405, METHOD_NOT_ALLOWED_BODY)
        if response is not None and method == "POST":
            allow = (response.headers.get("Allow") or "").replace(" ", "")
            checks.append(Check("405 carries Allow: GET", "GET" in allow.split(","), f"Allow: {allow!r}"))
    checks.append(_check_keep_alive(host, port, known))
    checks.append(_check_connection_close(host, port, known))
    if thorough:
        checks.append(_check_date_is_live(host, port, known))
    if listen_backlog is not None:
        checks.append(check_listen_backlog(listen_backlog, somaxconn()))
    return checks


def somaxconn(path: str = "/proc/sys/net/core/somaxconn") -> int | None:
    """The kernel's cap on a listen queue (net.core.somaxconn) in this network namespace; None when unreadable."""
    try:
        with open(path) as handle:
            return int(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


LISTEN_QUEUE_CHECK = "listen queue is the contract's"  # the check's name, as pages read it from a trial's report


def check_listen_backlog(found: int, cap: int | None) -> Check:
    """The server's listen queue (`found`, connections: the bound the kernel reports for its listening socket) is
    the contract's LISTEN_BACKLOG, as net.core.somaxconn (`cap`, None when unknown) caps it."""
    expected = min(contract.LISTEN_BACKLOG, cap) if cap is not None else contract.LISTEN_BACKLOG
    detail = (f"listen queue of {found:,} connections (the contract asks {contract.LISTEN_BACKLOG:,}"
              + (f"; net.core.somaxconn caps it at {cap:,}" if cap is not None else "") + ")")
    return Check(LISTEN_QUEUE_CHECK, found == expected, detail)


def _check_malformed_escape(host: str, port: int, route: str) -> Check:
    """`%zz` makes the target invalid: any 400 (the stack's) or the contract's JSON 400, or a close."""
    parameter = contract.ROUTE_PARAMETERS[route][0].name
    others = "".join(f"&{p.name}=1" for p in contract.ROUTE_PARAMETERS[route][1:])
    target = f"{route}?{parameter}=%zz{others}"
    name = f"GET {target} -> 400 (stack or contract)"
    try:
        response = request(host, port, "GET", target)
    except (http.client.RemoteDisconnected, ConnectionResetError):
        return Check(name, True, "connection closed (allowed for an invalid target)")
    except OSError as error:
        return Check(name, False, str(error))
    if response.status != 400:
        return Check(name, False, f"status {response.status}, expected 400")
    contract_json = response.body == error_body(not_integer_message(parameter))
    is_json = _media_type(response) == "application/json"
    if is_json and not contract_json:
        return Check(name, False, f"a JSON body that is not the contract's: {_show(response.body)!r}")
    return Check(name, True, "the contract's JSON 400" if contract_json else "the HTTP stack's own 400")


def _check_connection_close(host: str, port: int, target: str) -> Check:
    """A request that asks `Connection: close` is answered with `Connection: close`, then the connection closes:
    a load generator running a new connection per request (S1's load) learns it from the answer."""
    name = "Connection: close is answered with Connection: close, then closed"
    with socket.create_connection((host, port), timeout=REQUEST_TIMEOUT_S) as sock:
        try:
            sock.sendall(f"GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            received = b""
            while chunk := sock.recv(65536):
                received += chunk
        except OSError as error:
            return Check(name, False, str(error))
    head = received.split(b"\r\n\r\n", 1)[0].decode("latin-1").lower().split("\r\n")
    said = any(line.split(":", 1)[0].strip() == "connection" and "close" in line.split(":", 1)[1] for line in head[1:])
    if not head[0].startswith("http/1.1 200"):
        return Check(name, False, f"answered {head[0]!r}")
    return Check(name, said, "" if said else "closed without saying so (no Connection: close in the answer)")


def _check_keep_alive(host: str, port: int, target: str) -> Check:
    connection = http.client.HTTPConnection(host, port, timeout=REQUEST_TIMEOUT_S)
    try:
        for _ in range(3):
            connection.request("GET", target)
            answer = connection.getresponse()
            answer.read()
            if answer.will_close:
                return Check("keep-alive: three requests on one connection", False, "server closed the connection")
        return Check("keep-alive: three requests on one connection", True)
    except OSError as error:
        return Check("keep-alive: three requests on one connection", False, str(error))
    finally:
        connection.close()


def _check_date_is_live(host: str, port: int, target: str) -> Check:
    """Date must advance: two answers 1.1 s apart carry different Dates."""
    try:
        first = request(host, port, "GET", target).headers.get("Date")
        time.sleep(1.1)
        second = request(host, port, "GET", target).headers.get("Date")
    except OSError as error:
        return Check("Date is live (advances)", False, str(error))
    return Check("Date is live (advances)", first != second, f"{first!r} then {second!r}")


def summarize(checks: list[Check]) -> dict:
    failed = [c for c in checks if not c.passed]
    return {"passed": not failed, "checks": len(checks), "failed": len(failed), "results": [asdict(c) for c in checks]}
