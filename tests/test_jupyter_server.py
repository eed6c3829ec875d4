"""A notebook runs in a real Jupyter server with the `loadlab` kernel, as a JupyterLab user runs it.

A `jupyter server` is started (the server JupyterLab runs on), with the
`loadlab` kernelspec `make setup` registers (here in a private Jupyter data
folder, pointing at this interpreter). Notebook 03 is opened as a session
with that kernel, its parameters cell edited to re-analyse the committed
run (run_id = "latest", no Docker), and every code cell is executed in
order over the kernel's websocket, the way JupyterLab's "Run All" sends
them. The outputs must hold the figures, the provenance block filled in at
the top, and no error.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import nbformat
import pytest

from loadlab import paths

pytestmark = pytest.mark.slow
NOTEBOOK = "03-json-api.ipynb"
# Only to stop a server or kernel that hangs; nothing is judged by how long anything took.
START_TIMEOUT_S = 120
CELL_TIMEOUT_S = 900


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """A running `jupyter server` on loopback with a token; requests bypass any proxy."""

    def __init__(self, port: int, token: str):
        self.base = f"http://127.0.0.1:{port}"
        self.token = token
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def request(self, method: str, path: str, body: dict | None = None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.base}{path}", data=data, method=method,
                                         headers={"Authorization": f"token {self.token}",
                                                  "Content-Type": "application/json"})  # fmt: skip
        with self.opener.open(request, timeout=60) as response:
            payload = response.read()
        return json.loads(payload) if payload else None


@pytest.fixture
def server(tmp_path):
    data_dir = tmp_path / "jupyter-data"
    kernel_dir = data_dir / "kernels" / "loadlab"
    kernel_dir.mkdir(parents=True)
    # The kernelspec `make setup` registers (ipykernel install --name loadlab), for this interpreter.
    (kernel_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "loadlab", "language": "python"}))  # fmt: skip
    root = tmp_path / "notebooks"
    root.mkdir()
    notebook = nbformat.read(str(paths.NOTEBOOKS_DIR / NOTEBOOK), as_version=4)
    nbformat.write(notebook, str(root / NOTEBOOK))
    token, port = uuid.uuid4().hex, free_port()
    environment = {
        **os.environ, "JUPYTER_DATA_DIR": str(data_dir), "JUPYTER_PATH": str(data_dir),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter-config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "jupyter-runtime"),
        "LOADLAB_REPORTS_DIR": str(tmp_path / "reports"), "LOADLAB_STRICT_FIGURES": "1",
        "PYTHONPATH": os.pathsep.join([str(paths.ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    }  # fmt: skip
    log = open(tmp_path / "server.log", "w")
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
         "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}"]
        + (["--allow-root"] if os.geteuid() == 0 else []),  # CI and this machine run as root
        env=environment, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    running = Server(port, token)
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            running.request("GET", "/api/status")
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"jupyter server did not start: {(tmp_path / 'server.log').read_text()[-3000:]}")
            time.sleep(0.5)
    yield running
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    log.close()


def execute(channel, session: str, code: str) -> list[dict]:
    """Send one execute_request as JupyterLab does; return the iopub messages it caused, once the kernel replied."""
    msg_id = uuid.uuid4().hex
    channel.send(json.dumps({
        "header": {"msg_id": msg_id, "username": "test", "session": session, "msg_type": "execute_request",
                   "version": "5.3", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                    "allow_stdin": False, "stop_on_error": True},
    }))  # fmt: skip
    messages, replied, idle = [], None, False
    while replied is None or not idle:
        message = json.loads(channel.recv())
        if message.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        if message["channel"] == "shell" and message["msg_type"] == "execute_reply":
            replied = message["content"]
        elif message["channel"] == "iopub":
            messages.append(message)
            idle = idle or (message["msg_type"] == "status" and message["content"]["execution_state"] == "idle")
    assert replied["status"] == "ok", f"{code[:80]!r}: {replied.get('ename')}: {replied.get('evalue')}"
    return messages


def test_a_notebook_runs_through_a_jupyter_server_with_the_loadlab_kernel(server):
    import websocket  # websocket-client, pinned in env/requirements.txt

    assert "loadlab" in server.request("GET", "/api/kernelspecs")["kernelspecs"]
    session = server.request("POST", "/api/sessions", {"path": NOTEBOOK, "type": "notebook", "name": NOTEBOOK,
                                                        "kernel": {"name": "loadlab"}})  # fmt: skip
    kernel_id = session["kernel"]["id"]
    channel = websocket.create_connection(
        f"ws://127.0.0.1:{server.base.rsplit(':', 1)[1]}/api/kernels/{kernel_id}/channels?token={server.token}",
        timeout=CELL_TIMEOUT_S, suppress_origin=True)  # fmt: skip
    notebook = nbformat.read(str(paths.NOTEBOOKS_DIR / NOTEBOOK), as_version=4)
    outputs = []
    try:
        for cell in notebook.cells:
            if cell.cell_type != "code":
                continue
            code = cell.source
            if "parameters" in cell.metadata.get("tags", []):
                code = 'scale = "quick"\nrun_id = "latest"  # re-analyse the committed run'  # what the user types
            outputs += execute(channel, session["id"], code)
        where = execute(channel, session["id"], "import sys, loadlab\nprint(sys.executable, loadlab.__file__)")
    finally:
        channel.close()
        server.request("DELETE", f"/api/sessions/{session['id']}")
    kinds = [m["msg_type"] for m in outputs]
    assert "error" not in kinds
    figures = [m for m in outputs if m["msg_type"] in ("display_data", "execute_result")
               and "image/svg+xml" in m["content"]["data"]]  # fmt: skip
    assert len(figures) >= 5, f"{len(figures)} figures shown"
    updates = [m for m in outputs if m["msg_type"] == "update_display_data"]
    assert any("Re-analysed" in m["content"]["data"].get("text/html", "") for m in updates), "provenance never filled in"
    printed = "".join(m["content"]["text"] for m in where if m["msg_type"] == "stream")
    assert printed.split()[0] == sys.executable and Path(printed.split()[1]).is_relative_to(paths.ROOT / "src")
