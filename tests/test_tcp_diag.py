"""The kernel's socket diagnostics count a port's established connections: real sockets on loopback."""

import os
import socket
import time

from loadlab.harness import tcp_diag
from loadlab.harness.capture import established_connections


def _listener(backlog: int = 64) -> socket.socket:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(backlog)
    return listener


def test_connections_held_are_counted_accepted_or_queued_and_other_ports_are_not():
    with _listener() as listener, _listener() as other:
        port = listener.getsockname()[1]
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(12)]
        elsewhere = [socket.create_connection(("127.0.0.1", other.getsockname()[1])) for _ in range(3)]
        accepted = [listener.accept()[0] for _ in range(5)]  # 5 accepted, 7 still in the listen queue
        try:
            assert tcp_diag.established_count(port) == 12
            # 7 of them wait in the accept queue: the kernel's, not yet the server's.
            assert tcp_diag.connection_counts(port) == (12, 7)
            # The same count as the /proc text tables give (the slower reader it replaces in measured windows).
            assert tcp_diag.established_count(port, os.getpid()) == established_connections(os.getpid(), port)
            for sock in accepted + clients[5:]:
                sock.close()
            time.sleep(0.05)
            # Closed on the server's side: those sockets left ESTABLISHED (the clients' ends are not counted).
            assert tcp_diag.established_count(port) == 0
        finally:
            for sock in clients + elsewhere + accepted:
                sock.close()


def test_a_listening_sockets_queue_bound_is_the_backlog_it_asked_for_and_nothing_listening_reads_none():
    with _listener(backlog=37) as small, _listener(backlog=300) as larger:
        assert tcp_diag.listen_backlog(small.getsockname()[1]) == 37
        assert tcp_diag.listen_backlog(larger.getsockname()[1], os.getpid()) == 300
        port = small.getsockname()[1]
    # The port no longer listens: nothing to read, not a zero.
    assert tcp_diag.listen_backlog(port) is None
    assert tcp_diag.listen_backlog(port, pid=2**22 + 7) is None


def test_a_process_in_another_network_namespace_gets_no_count():
    assert tcp_diag.same_network_namespace(os.getpid())
    assert tcp_diag.established_count(1, pid=2**22 + 7) is None  # no such process: nothing to compare with


def test_the_counter_reads_once_a_second_and_summarizes_what_it_read():
    with _listener() as listener:
        port = listener.getsockname()[1]
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]
        try:
            with tcp_diag.EstablishedCounter(port, os.getpid(), interval_s=0.1) as counter:
                time.sleep(0.35)
            summary = counter.summary()
        finally:
            for sock in clients:
                sock.close()
    assert summary["connections_established_samples"] == len(counter.counts) >= 3
    assert summary["connections_established_median"] == 4 and summary["connections_established_max"] == 4
    # Nobody accepted them: all four wait in the accept queue, so the server itself holds none.
    assert summary["connections_queued_median"] == 4 and summary["connections_held_median"] == 0
    assert tcp_diag.EstablishedCounter(port, None).summary()["connections_established_median"] is None


def test_only_readings_taken_while_the_loadgen_ran_count():
    """A 3 s window read once a second: one reading before the loadgen connected, one after it closed. Counted
    together they made the median 8 of wrk's 16 connections (a CI run's two-host trial); inside the load's span,
    WINDOW_EDGE_S from either end, only the two readings of the held connections remain."""
    counts, times = [(0, 0), (16, 0), (16, 0), (0, 0)], [99.99, 101.0, 102.0, 103.05]
    assert tcp_diag.summarize_counts(counts)["connections_established_median"] == 8
    inside = tcp_diag.summarize_counts(counts, times, load_span=(100.0, 103.1))
    assert inside["connections_established_median"] == 16 and inside["connections_established_samples"] == 2
    assert tcp_diag.within_load([100.2, 100.3, 102.8, 102.9], (100.0, 103.1)) == [False, True, True, False]
    # A window too short for any reading inside it has no count, not the edges' count.
    assert tcp_diag.summarize_counts(counts, times, load_span=(101.9, 102.1))["connections_established_median"] is None


def test_what_a_finished_load_left_is_counted_and_waited_for_until_the_server_got_through_it():
    """Issue 32: a window that followed a warm-up at once started behind the warm-up's abandoned connections."""
    with _listener(backlog=128) as listener:
        port = listener.getsockname()[1]
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(40)]
        try:
            accepted = [listener.accept()[0] for _ in range(10)]  # 10 accepted, 30 still in the accept queue
            for client in clients:  # the loadgen exits: every client end closes
                client.close()
            time.sleep(0.05)
            counts = tcp_diag.leftover_counts(port)
            # The 10 accepted ones are half-closed (the server has not closed its end), the other 30 still queued.
            assert counts == {"accept_queue": 30, "established": 0, "close_wait": 40}
            waited = tcp_diag.wait_for_leftovers(port, None, level=100, max_s=0.3)
            assert waited["settled"] is False and 0.3 <= waited["settle_s"] < 1.0
            assert waited["leftovers_at_start"]["accept_queue"] == 30
            # The server gets through them: accepts the rest and closes every one.
            accepted += [listener.accept()[0] for _ in range(30)]
            for sock in accepted:
                sock.close()
            time.sleep(0.05)
            settled = tcp_diag.wait_for_leftovers(port, None, level=100, max_s=2.0)
            assert settled["settled"] is True and settled["settle_s"] < 0.2
            assert settled["leftovers_at_end"] == {"accept_queue": 0, "established": 0, "close_wait": 0}
        finally:
            for client in clients:
                client.close()
