"""Installing a Debian package as root, the one way the harness does it (docker.io, debootstrap).

apt-get waits for the dpkg lock that another apt-get holds (unattended
upgrades, a second install) instead of failing at once; if it still fails, the
error is one line that says what to run by hand, never a traceback.
"""

from __future__ import annotations

import os
import subprocess

from loadlab.errors import LoadlabError

# How long apt-get waits for another package manager's lock before it gives up (seconds).
DPKG_LOCK_TIMEOUT_S = 300


def apt_install(*packages: str, log=print) -> None:
    """`apt-get update` then `apt-get install -y PACKAGES`, waiting for the dpkg lock; LoadlabError if it fails."""
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    lock = ["-o", f"DPkg::Lock::Timeout={DPKG_LOCK_TIMEOUT_S}"]
    log(f"installing Debian's {' '.join(packages)} (apt-get; waits up to {DPKG_LOCK_TIMEOUT_S} s for the dpkg lock)")
    for command in (["apt-get", *lock, "update", "-q"], ["apt-get", *lock, "install", "-y", "-q", *packages]):
        result = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if result.returncode != 0:
            last = (result.stderr.strip().splitlines() or ["no message"])[-1]
            raise LoadlabError(
                f"`{' '.join(command)}` failed (exit {result.returncode}: {last}). Install it by hand once "
                f"(`apt-get install -y {' '.join(packages)}` as root, after any other package manager has finished), "
                "then run the command again.")
