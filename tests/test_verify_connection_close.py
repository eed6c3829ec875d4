"""The contract's Connection: close rule, checked against two small real servers on loopback: one that says it
closes, and one that closes without saying so (as the JDK's HttpServer did, which wrk then counted as a read
error on every request)."""

import socket
import threading

import pytest

from loadlab.contract.verify import _check_connection_close

BODY = b"0123456789" * 20


def _serve_once_per_connection(says_close: bool, keeps_open: bool = False):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    held = []

    def run():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            request = b""
            while b"\r\n\r\n" not in request:
                request += connection.recv(4096)
            head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 200\r\n"
            connection.sendall(head + (b"Connection: close\r\n" if says_close else b"") + b"\r\n" + BODY)
            if keeps_open:
                held.append(connection)
            else:
                connection.close()

    threading.Thread(target=run, daemon=True).start()
    return listener


@pytest.mark.parametrize("says_close, passes", [(True, True), (False, False)])
def test_a_close_must_be_announced_in_the_answer(says_close, passes):
    listener = _serve_once_per_connection(says_close)
    try:
        check = _check_connection_close("127.0.0.1", listener.getsockname()[1], "/plaintext200")
    finally:
        listener.close()
    assert check.passed is passes, check
    if not passes:
        assert "no Connection: close" in check.detail


def test_a_server_that_says_close_but_keeps_the_connection_open_fails(monkeypatch):
    from loadlab.contract import verify

    monkeypatch.setattr(verify, "REQUEST_TIMEOUT_S", 0.5)
    listener = _serve_once_per_connection(True, keeps_open=True)
    try:
        check = _check_connection_close("127.0.0.1", listener.getsockname()[1], "/plaintext200")
    finally:
        listener.close()
    assert not check.passed and "timed out" in check.detail
