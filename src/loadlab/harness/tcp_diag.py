"""Count a server's established TCP connections from the kernel, cheaply, while the load runs.

`capture.established_connections` reads /proc/PID/net/tcp: the kernel formats
every socket of the namespace as text, TIME_WAIT ones included, and Python
parses them. Under S1's short connections that is tens of thousands of lines
a second, CPU the measured window would pay for. The kernel's socket
diagnostics (netlink SOCK_DIAG, what `ss` uses) instead send only the sockets
in the states asked for, as fixed binary records, so a count of 10,000
connections costs a few milliseconds.

Servers run with host networking (harness.container), so the harness's own
network namespace is the server's; `connection_counts` answers None when it
is not (an engine on another machine), never a count of the wrong sockets.
"""

from __future__ import annotations

import os
import socket
import statistics
import struct
import threading
import time

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_DONE, NLMSG_ERROR = 3, 2
TCP_ESTABLISHED, TCP_TIME_WAIT, TCP_CLOSE_WAIT, TCP_LISTEN = 1, 6, 8, 10  # include/net/tcp_states.h
_NLMSG_HEADER = struct.Struct("=IHHII")  # length, type, flags, sequence, port id
# inet_diag_req_v2: family, protocol, extensions, pad, states; then inet_diag_sockid (48 bytes, zero: dump all)
_REQUEST = struct.Struct("=BBBBI48x")
_SPORT_OFFSET = 4  # inet_diag_msg: family, state, timer, retransmits (1 byte each), then the sockid: sport first
# After the 48-byte sockid: expires, rqueue, wqueue, uid, then the inode of the socket's file. A connection
# still in the accept queue has no file yet (inode 0): the kernel completed it, the server has not accepted it.
_INODE_OFFSET = 4 + 48 + 4 * 4
# A listening socket's rqueue is its accept queue's length now (inet_diag: sk_ack_backlog), its wqueue the
# queue's bound (sk_max_ack_backlog: listen(2)'s backlog, capped at net.core.somaxconn).
_RQUEUE_OFFSET = 4 + 48 + 4
_WQUEUE_OFFSET = _RQUEUE_OFFSET + 4


def same_network_namespace(pid: int) -> bool:
    """True when process `pid` shares this process's network namespace (host networking on this host)."""
    try:
        return os.readlink(f"/proc/{pid}/ns/net") == os.readlink("/proc/self/ns/net")
    except OSError:
        return False


def _dump(family: int, states: int) -> list[bytes]:
    """Every inet_diag_msg of TCP sockets of `family` in `states` (a bit mask), from one netlink dump."""
    messages: list[bytes] = []
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG) as netlink:
        body = _REQUEST.pack(family, socket.IPPROTO_TCP, 0, 0, states)
        netlink.send(_NLMSG_HEADER.pack(_NLMSG_HEADER.size + len(body), SOCK_DIAG_BY_FAMILY,
                                        NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + body)
        while True:
            data = netlink.recv(1 << 16)
            offset = 0
            while offset + _NLMSG_HEADER.size <= len(data):
                length, kind, _flags, _sequence, _port = _NLMSG_HEADER.unpack_from(data, offset)
                if kind == NLMSG_DONE:
                    return messages
                if kind == NLMSG_ERROR:
                    raise OSError("the kernel refused the socket diagnostics request")
                messages.append(data[offset + _NLMSG_HEADER.size: offset + length])
                offset += (length + 3) & ~3  # NLMSG_ALIGN
            if not data:
                return messages


def _port_messages(port: int, states: int):
    """Every inet_diag_msg of TCP sockets in `states` whose local port is `port`, IPv4 and IPv6 (raises OSError)."""
    for family in (socket.AF_INET, socket.AF_INET6):
        for message in _dump(family, states):
            if len(message) >= _INODE_OFFSET + 4 and struct.unpack_from("!H", message, _SPORT_OFFSET)[0] == port:
                yield message


def connection_counts(port: int, pid: int | None = None) -> tuple[int, int] | None:
    """(established, queued) TCP connections in state ESTABLISHED whose local port is `port` (IPv4 and IPv6), in
    this network namespace: `queued` are those still in the accept queue (no socket file yet: the kernel
    completed them, the server has not accepted them). None when `pid` is given and lives in another namespace,
    or the kernel offers no socket diagnostics.

    A dump walks the kernel's socket hash table in batches; it is not an atomic snapshot. Under connection churn
    (a connection per request) a connection closed after the walk passed it and its successor, opened in a bucket
    not yet walked, are both counted, so a reading can exceed the connections open at any one instant by a few.
    With connections held for the window (S1's counts) there is no churn and the count is exact.
    """
    if pid is not None and not same_network_namespace(pid):
        return None
    established = queued = 0
    try:
        for message in _port_messages(port, 1 << TCP_ESTABLISHED):
            established += 1
            queued += struct.unpack_from("=I", message, _INODE_OFFSET)[0] == 0
    except OSError:
        return None
    return established, queued


def listen_backlog(port: int, pid: int | None = None) -> int | None:
    """The accept queue's bound (connections) of the socket listening on `port` in this network namespace: the
    backlog the server asked listen(2) for, as the kernel capped it. The largest where several listen (IPv4 and
    IPv6, or SO_REUSEPORT workers); None when `pid` is given and lives in another namespace, when nothing
    listens on `port` here (an engine on another machine) or the kernel offers no socket diagnostics."""
    if pid is not None and not same_network_namespace(pid):
        return None
    try:
        bounds = [struct.unpack_from("=I", message, _WQUEUE_OFFSET)[0]
                  for message in _port_messages(port, 1 << TCP_LISTEN)]
    except OSError:
        return None
    return max(bounds) if bounds else None


def leftover_counts(port: int, pid: int | None = None) -> dict | None:
    """What a server on `port` still has to get through from load that has ended: {"accept_queue": connections
    its listening sockets hold unaccepted, "established": its open connections, "close_wait": connections the
    client closed and the server has not}. None where the counts cannot be read here (see connection_counts).

    A loadgen that exits at the end of a warm-up leaves up to its whole level of connections behind it; a server
    that cannot accept as fast (one event loop behind a quota, at 10,000 connections a request) still holds them
    when the next load starts, and its accept queue overflows (issue 32's sketch: node-eventloop, 8,776-18,035
    listen overflows in a window that followed its warm-up at once).
    """
    if pid is not None and not same_network_namespace(pid):
        return None
    counts = {"accept_queue": 0, "established": 0, "close_wait": 0}
    try:
        for message in _port_messages(port, (1 << TCP_LISTEN) | (1 << TCP_ESTABLISHED) | (1 << TCP_CLOSE_WAIT)):
            state = message[1]
            if state == TCP_LISTEN:
                counts["accept_queue"] += struct.unpack_from("=I", message, _RQUEUE_OFFSET)[0]
            elif state == TCP_ESTABLISHED:
                counts["established"] += 1
            else:
                counts["close_wait"] += 1
    except OSError:
        return None
    return counts


def wait_for_leftovers(port: int, pid: int | None, level: int, max_s: float, poll_s: float = 0.1) -> dict:
    """Wait (at most `max_s` seconds) until the server on `port` has got through what the last load left: an
    empty accept queue, and open and half-closed connections at most `settled_at` (1% of `level`, at least 16).
    Returns {"settle_s", "settled" (True, False on the deadline, None where nothing can be read),
    "leftovers_at_start": the first counts, "leftovers_at_end": the last}."""
    settled_at = max(16, level // 100)
    started = time.monotonic()
    first = last = leftover_counts(port, pid)
    while last is not None:
        if last["accept_queue"] == 0 and last["established"] + last["close_wait"] <= settled_at:
            break
        if time.monotonic() - started >= max_s:
            return {"settle_s": time.monotonic() - started, "settled": False, "leftovers_at_start": first,
                    "leftovers_at_end": last}
        time.sleep(poll_s)
        last = leftover_counts(port, pid)
    return {"settle_s": time.monotonic() - started, "settled": None if last is None else True,
            "leftovers_at_start": first, "leftovers_at_end": last}


def time_wait_ports() -> list[int] | None:
    """The local port of every TCP socket in TIME-WAIT in this network namespace (IPv4 and IPv6), one entry a
    socket; None when the kernel offers no socket diagnostics.

    What hostfacts.tcp_time_wait reads from /proc/net/tcp, without the text:
    after S1's short connections the host holds tens of thousands of them,
    and the text took 0.43 s to read at 40,000, before every trial.
    """
    ports: list[int] = []
    try:
        for family in (socket.AF_INET, socket.AF_INET6):
            ports.extend(struct.unpack_from("!H", message, _SPORT_OFFSET)[0]
                         for message in _dump(family, 1 << TCP_TIME_WAIT) if len(message) >= _SPORT_OFFSET + 2)
    except OSError:
        return None
    return ports


def time_wait_counts() -> tuple[int, int] | None:
    """(sockets, distinct local ports) in TIME-WAIT (`time_wait_ports`), as hostfacts.tcp_time_wait counts them."""
    ports = time_wait_ports()
    return None if ports is None else (len(ports), len(set(ports)))


def established_count(port: int, pid: int | None = None) -> int | None:
    """TCP connections in state ESTABLISHED whose local port is `port` (`connection_counts`), the accept queue
    included: the kernel holds those for the server."""
    counts = connection_counts(port, pid)
    return None if counts is None else counts[0]


# A reading this close to either end of the loadgen's run (its exec started or returned) is not counted: the first
# comes before the loadgen has connected and a last one after it has closed, and in a short window one such
# reading decides the median (a 3 s window's readings [0, 16, 16, 0] have median 8, not wrk's 16).
WINDOW_EDGE_S = 0.25


class EstablishedCounter:
    """`connection_counts` once a second on a background thread while the window runs (a context manager);
    `counts` holds the readings (None where one could not be taken), `times` when each was taken (the
    monotonic clock, seconds)."""

    def __init__(self, port: int, pid: int | None, interval_s: float = 1.0):
        self.port, self.pid, self.interval_s = port, pid, interval_s
        self.counts: list[tuple[int, int] | None] = []  # (established, queued) a reading
        self.times: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="loadlab-established", daemon=True)

    def _run(self) -> None:
        next_tick = time.monotonic()
        while not self._stop.is_set():
            taken = time.monotonic()
            self.counts.append(connection_counts(self.port, self.pid))
            self.times.append(taken)
            next_tick += self.interval_s
            self._stop.wait(max(0.0, next_tick - time.monotonic()))

    def __enter__(self) -> EstablishedCounter:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def summary(self, load_span: tuple[float, float] | None = None) -> dict:
        """`summarize_counts` of this window's readings (those inside `load_span` only, when given)."""
        return summarize_counts(self.counts, self.times, load_span)


def within_load(times: list[float], load_span: tuple[float, float]) -> list[bool]:
    """Which readings, taken at `times` (seconds, the clock of `load_span`), fall inside the loadgen's run
    `load_span` (its exec's start and return) by more than WINDOW_EDGE_S at either end."""
    began, ended = load_span
    return [began + WINDOW_EDGE_S <= t <= ended - WINDOW_EDGE_S for t in times]


def summarize_counts(counts: list[tuple[int, int] | None], times: list[float] | None = None,
                     load_span: tuple[float, float] | None = None) -> dict:
    """Over a window's (established, queued) readings (with `times` and `load_span`, only those `within_load`):
    `connections_established_median` and `_max` (the kernel's count, the accept queue included),
    `connections_queued_median` (established, not yet accepted by the server), `connections_held_median`
    (accepted and open: established less queued, a reading at a time), and how many readings there were. The
    sidecar's counts (harness.sidecar) are summarized the same way."""
    if load_span is not None and times is not None:
        counts = [count for count, inside in zip(counts, within_load(times, load_span)) if inside]
    readings = [count for count in counts if count is not None]
    if not readings:
        return {"connections_established_median": None, "connections_established_max": None,
                "connections_queued_median": None, "connections_held_median": None,
                "connections_established_samples": 0}
    return {"connections_established_median": float(statistics.median(e for e, _ in readings)),
            "connections_established_max": max(e for e, _ in readings),
            "connections_queued_median": float(statistics.median(q for _, q in readings)),
            "connections_held_median": float(statistics.median(e - q for e, q in readings)),
            "connections_established_samples": len(readings)}
