"""Where and with what a run was measured: code, host, engine, images."""

from __future__ import annotations

# Read without Docker, so they live on the analysis side; re-exported here for the manifests.
from loadlab.hostfacts import connection_limits, cpu_model, git_state, host_description, sitting

__all__ = ["collect", "cpu_model", "git_state", "host_description"]


def collect(client=None) -> dict:
    """Everything a manifest records about the measuring setup."""
    facts = {**git_state(), "host": host_description(), "connection_limits": connection_limits(), "sitting": sitting()}
    if client is not None:
        from loadlab.harness.engine import engine_description

        facts["engine"] = engine_description(client)
    return facts
