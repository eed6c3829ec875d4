"""Captures that read sockets: an overloaded server's late answer is told apart from a server that is gone, and a
server's established connections are counted from the kernel (real sockets on loopback)."""

import socket
import urllib.request

import pytest

from loadlab.harness.capture import is_timeout


def _error(url: str, timeout_s: float) -> OSError:
    with pytest.raises(OSError) as caught:
        urllib.request.urlopen(url, timeout=timeout_s)
    return caught.value


def test_a_server_that_accepts_but_does_not_answer_in_time_is_a_timeout():
    with socket.socket() as listener:  # the kernel completes the handshake; nobody ever reads or answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        assert is_timeout(_error(f"http://127.0.0.1:{port}/debug/vars", 0.3))


def test_a_port_nobody_listens_on_is_a_server_that_is_gone():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, never listening: connections are refused
        assert not is_timeout(_error(f"http://127.0.0.1:{port}/debug/vars", 0.3))


def test_established_connections_are_counted_from_the_kernel_socket_table():
    import os

    from loadlab.harness.capture import established_connections

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        port = listener.getsockname()[1]
        assert established_connections(os.getpid(), port) == 0  # listening is not established
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
        accepted = [listener.accept()[0] for _ in range(2)]  # a third waits in the backlog, established all the same
        try:
            # Only the server side (local port == port) counts, not the clients' own sockets.
            assert established_connections(os.getpid(), port) == 3
        finally:
            for connection in clients + accepted:
                connection.close()


def test_accepted_connections_are_counted_by_the_kernel():
    import os

    from loadlab.harness.capture import tcp_passive_opens

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        port = listener.getsockname()[1]
        before = tcp_passive_opens(os.getpid())
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
        try:
            after = tcp_passive_opens(os.getpid())
        finally:
            for connection in clients:
                connection.close()
    # Host-wide: the 20 handshakes completed here, and anything else the host accepted meanwhile (little).
    assert 20 <= after - before < 40


def test_the_accepted_count_of_a_process_that_does_not_exist_is_unknown():
    from loadlab.harness.capture import tcp_passive_opens

    assert tcp_passive_opens(2**22 + 1) is None  # above the kernel's largest pid
