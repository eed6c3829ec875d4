"""Where and with what a run was measured: code, host, engine, images."""

from __future__ import annotations

# Read without Docker, so they live on the analysis side; re-exported here for the manifests.
from loadlab.hostfacts import connection_limits, cpu_model, git_state, host_description, host_speed_index, sitting

__all__ = ["collect", "cpu_model", "git_state", "host_description", "host_speed_index", "record_speed"]


def collect(client=None, cpus=None) -> dict:
    """Everything a manifest records about the measuring setup, with the host speed index at the start
    (`record_speed(facts, "end")` adds the one at the end) on `cpus` (default: every CPU this process may use)."""
    facts = {**git_state(), "host": host_description(), "connection_limits": connection_limits(), "sitting": sitting(),
             "host_speed": {"start": host_speed_index(cpus)}}
    if client is not None:
        from loadlab.harness.engine import engine_description

        facts["engine"] = engine_description(client)
    return facts


def record_speed(facts: dict, moment: str, cpus=None) -> None:
    """Add the host speed index read now to a manifest's provenance, as `host_speed[moment]` ("start" or "end");
    the CPUs are those the start was read on."""
    cpus = cpus if cpus is not None else [int(cpu) for cpu in
                                          ((facts.get("host_speed") or {}).get("start") or {}).get("ns_per_kib_by_cpu", {})] or None
    facts.setdefault("host_speed", {})[moment] = host_speed_index(cpus)
