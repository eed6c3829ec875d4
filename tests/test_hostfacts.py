"""Facts about the host that bound an experiment, read again independently."""

import resource
import subprocess

from loadlab import hostfacts


def test_connection_limits_are_this_hosts_and_the_smallest_sets_the_ceiling():
    limits = hostfacts.connection_limits()
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    assert limits["open_files_hard"] == (None if hard == resource.RLIM_INFINITY else hard)
    low, high = (int(v) for v in subprocess.run(["sysctl", "-n", "net.ipv4.ip_local_port_range"], capture_output=True,
                                                 text=True, check=True).stdout.split())
    assert limits["ephemeral_ports"] == high - low + 1
    caps = [v for v in (limits["open_files_hard"], limits["ephemeral_ports"]) if v is not None]
    assert limits["max_connections"] == min(caps) - 64
