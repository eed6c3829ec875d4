"""docs/adding-a-runtime.md, followed: a minimal server made from its steps is built, verified and measured.

The server folder goes into a temporary folder named by LOADLAB_EXTRA_SERVER_DIRS (the harness's way of
seeing servers outside servers/), so the repository is not touched. Its loadlab.yaml is the guide's own
example block, and the commands run are the guide's own command lines: when the guide changes so that its
steps no longer work, this test fails.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from loadlab import paths

pytestmark = pytest.mark.docker

GUIDE = paths.ROOT / "docs" / "adding-a-runtime.md"
NAME = "guide-example"

# The smallest contract subset a loadlab.yaml may declare (routes: [/plaintext, /json, /health]), in Node from
# Debian's nodejs as the guide's Dockerfile section says. HEAD, 404, 405 + Allow, Connection: close and a live
# Date come from the contract, the rest (Content-Length, keep-alive) from node's http module; the listen queue is
# the contract's 4,096 (node's default, 511, fails verify).
SERVER_JS = r"""'use strict';
const http = require('http');
const ROUTES = new Set(['/plaintext', '/json', '/health']);
function send(req, res, status, type, body, extra) {
  res.statusCode = status;
  res.setHeader('Server', 'guide-example');
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  for (const [k, v] of extra || []) res.setHeader(k, v);
  res.end(req.method === 'HEAD' ? undefined : body);
}
const json = (req, res, status, value, extra) => send(req, res, status, 'application/json', JSON.stringify(value), extra);
http.createServer({ keepAliveTimeout: 120000 }, (req, res) => {
  const path = req.url.split('?')[0];
  if (!ROUTES.has(path)) return json(req, res, 404, { error: 'not found' });
  if (req.method !== 'GET' && req.method !== 'HEAD') return json(req, res, 405, { error: 'method not allowed' }, [['Allow', 'GET']]);
  if (path === '/plaintext') return send(req, res, 200, 'text/plain', 'Hello, World!');
  if (path === '/json') return json(req, res, 200, { message: 'Hello, World!' });
  return json(req, res, 200, { server: 'guide-example', runtime: 'node', runtime_version: process.versions.node,
                               model: 'single-event-loop', settings: {}, contract: 1 });
}).on('clientError', (err, socket) => socket.destroy()).listen({ port: Number(process.env.PORT || 8080), host: process.env.HOST || '0.0.0.0', backlog: 4096 });
"""

DOCKERFILE = """ARG BASE_IMAGE=loadlab/base:trixie
FROM ${BASE_IMAGE}
ARG NODE_MAJOR=20
RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nodejs \\
    && apt-get clean && rm -rf /var/lib/apt/lists/*
RUN found="$(node --version)"; case "$found" in "v${NODE_MAJOR}."*) echo "loadlab: node $found" ;; \\
    *) echo "loadlab: expected node v${NODE_MAJOR}.x, got ${found:-no node}" >&2; exit 1 ;; esac
COPY server.js /opt/app/
USER 10001:10001
ENV HOST=0.0.0.0 PORT=8080
EXPOSE 8080
ENTRYPOINT ["/usr/bin/node", "/opt/app/server.js"]
"""


def _guide_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", GUIDE.read_text(), re.S)


def _guide_commands() -> dict[str, list[str]]:
    """The guide's command lines by subcommand (build, verify, trial), `<name>` filled in, this Python's loadlab."""
    commands: dict[str, list[str]] = {}
    for block in _guide_blocks("sh"):
        for line in block.splitlines():
            words = line.replace("<name>", NAME).split()
            if "loadlab.cli" not in words:
                continue
            rest = words[words.index("loadlab.cli") + 1:]
            commands.setdefault(" ".join(rest[:1] + [w for w in rest[1:] if w == "--fuzz"]), rest)
    return commands


def test_the_guide_names_its_commands_and_a_loadlab_yaml_the_schema_accepts():
    assert {"build", "verify", "verify --fuzz", "trial"} <= set(_guide_commands())
    example = yaml.safe_load(_guide_blocks("yaml")[0])
    assert {"runtime", "model", "routes", "variants", "knobs"} <= set(example)


def test_a_server_made_from_the_guide_builds_verifies_and_runs_a_trial(tmp_path, loadgen_image):
    # The loadgen is built by its fixture, outside the 240 s each guide command gets: on a cold machine
    # this test can be the first to need it, and building it is minutes of its own (CI of stop 38).
    folder = tmp_path / "servers" / NAME
    folder.mkdir(parents=True)
    (folder / "server.js").write_text(SERVER_JS)
    (folder / "Dockerfile").write_text(DOCKERFILE)
    # The guide's example loadlab.yaml, with the two changes the guide names: a route subset, and a test server
    # is no contestant (it is in no RUNTIMES table and no palette). Our tiny server compiles like node-eventloop.
    spec = yaml.safe_load(_guide_blocks("yaml")[0])
    spec.update(routes=["/plaintext", "/json", "/health"], contestant=False)
    (folder / "loadlab.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    (folder / "README.md").write_text("# guide-example\n\n**Model:** one event loop (a test server).\n")

    env = {**os.environ, "LOADLAB_EXTRA_SERVER_DIRS": str(folder.parent), "PYTHONPATH": str(paths.ROOT / "src")}
    commands = _guide_commands()

    def run(key: str, *extra: str) -> subprocess.CompletedProcess:
        args = [sys.executable, "-m", "loadlab.cli", *commands[key], *extra]
        return subprocess.run(args, capture_output=True, text=True, env=env, cwd=paths.ROOT, timeout=240)

    built = run("build", "--no-install")
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    for key in ("verify", "verify --fuzz"):
        checked = run(key, "--no-build")
        assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]
        assert re.search(r"\b\d+ passed, 0 failed", checked.stdout), checked.stdout[-1000:]
    # The guide's trial, shortened to fit the test's budget (a 2 s window after 1 s of warm-up).
    trial = run("trial", "--no-build", "--duration", "2", "--warmup", "1", "--connections", "8", "--json")
    assert trial.returncode == 0, trial.stdout[-2000:] + trial.stderr[-2000:]
    row = json.loads(trial.stdout.strip().splitlines()[-1])
    assert row["status"] == "ok" and row["server"] == NAME, row
    assert row["throughput_rps"] > 0 and row["errors_status"] == 0, row
