"""Every Dockerfile pins its toolchain, as the lockfiles pin the libraries.

Debian replaces exact package versions with each point release, so a pin is
a versioned package name where Debian has one (golang-1.24-go,
openjdk-21-jdk-headless, php8.4-cli, python3.13) plus an `ARG <TOOL>_VERSION`
and a build step that fails with `loadlab: expected ..., got ...` when the
installed toolchain is another. These tests read the Dockerfiles (no Docker)
and run each check step in a shell against stand-in binaries that print a
right and a wrong version, as the real ones print them.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from loadlab import paths, servers

DOCKERFILES = sorted(paths.SERVERS_DIR.glob("*/Dockerfile")) + [paths.ROOT / "microbench-programs" / "Dockerfile"]
IDS = [str(p.relative_to(paths.ROOT)) for p in DOCKERFILES]

# Debian package (a prefix of its name) -> the ARG that must pin it in the same stage.
TOOLCHAIN_PACKAGES = {
    "golang": "GO_VERSION",
    "openjdk": "JDK_VERSION",
    "rustc": "RUST_VERSION",
    "cargo": "RUST_VERSION",
    "php": "PHP_VERSION",
    "python": "PYTHON_VERSION",
    "nginx": "NGINX_VERSION",
    "wrk": "WRK_VERSION",
    "nodejs": "NODE_MAJOR",
    "erlang": "OTP_MAJOR",
}
# Packages Debian ships per version: the name itself must carry the ARG.
VERSIONED_NAMES = {"golang": "golang-${GO_VERSION}-go", "openjdk": "openjdk-${JDK_VERSION}-jdk-headless",
                   "php": "php${PHP_VERSION}-", "python": "python${PYTHON_VERSION}"}
# Packages that go with a toolchain and need no pin of their own.
COMPANIONS = {"php-pear", "erlang-dev"}

# What each tool prints, right (the version an ARG names) and wrong. The right
# lines are the real output of trixie's packages (the builds print them).
STAND_INS = {
    "go": ("go version go{v}.4 linux/amd64", "go version go1.99.1 linux/amd64", 0),
    "java": ('openjdk version "{v}.0.12.1" 2026-08-18', 'openjdk version "17.0.9" 2023-10-17', 0),
    "rustc": ("rustc {v}.1 (4eb161250 2025-03-15) (built from a source tarball)", "rustc 1.96.0 (deadbeef 2026-01-01)", 0),
    "cargo": ("cargo {v}.1 (d73d2caf9 2024-12-31)", "cargo 1.96.0 (deadbeef 2026-01-01)", 0),
    "php": ("{v}.24", "7.4.33", 0),
    "python": ("Python {v}.5", "Python 3.99.1", 0),
    "nginx": ("nginx version: nginx/{v}.3", "nginx version: nginx/1.99.0", 0),
    "wrk": ("wrk debian/{v}-4+b1 [epoll] Copyright (C) 2012 Will Glozer\nUsage: wrk <options> <url>",
            "wrk debian/4.2.0-1 [epoll] Copyright (C) 2012 Will Glozer", 1),
    "node": ("v{v}.19.2", "v18.19.0", 0),
    "erl": ("{v}", "26", 0),
}
# The ARG naming each tool's version (a versioned command, php8.4 or python3.13, runs the same stand-in).
TOOL_ARG = {"go": "GO_VERSION", "java": "JDK_VERSION", "rustc": "RUST_VERSION", "cargo": "RUST_VERSION",
            "php": "PHP_VERSION", "python": "PYTHON_VERSION", "nginx": "NGINX_VERSION", "wrk": "WRK_VERSION",
            "node": "NODE_MAJOR", "erl": "OTP_MAJOR"}


def _instructions(path: Path) -> list[str]:
    """The Dockerfile's instructions, continuation lines joined, comments dropped."""
    joined, current = [], ""
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("#"):  # Docker drops comment lines, inside a continuation too
            continue
        current += line.rstrip("\\").rstrip() + " " if line.rstrip().endswith("\\") else line
        if not line.rstrip().endswith("\\"):
            if current.strip():
                joined.append(current.strip())
            current = ""
    return joined


def _stages(path: Path) -> list[list[str]]:
    stages: list[list[str]] = []
    for instruction in _instructions(path):
        if instruction.upper().startswith("FROM "):
            stages.append([])
        if stages:
            stages[-1].append(instruction)
    return stages


def _arg_defaults(stage: list[str]) -> dict[str, str]:
    found = {}
    for instruction in stage:
        match = re.fullmatch(r"ARG\s+([A-Z_]+)=(\S*)", instruction)
        if match:
            found[match[1]] = match[2].strip('"')
    return found


def _installed_packages(stage: list[str]) -> list[str]:
    packages = []
    for instruction in stage:
        for command in re.findall(r"apt-get install ([^&;|]*)", instruction):
            packages += [word.strip('"') for word in command.split() if not word.startswith("-")]
    return packages


def _checks(stage: list[str]) -> list[str]:
    return [i[len("RUN "):] for i in stage if i.startswith("RUN ") and "loadlab: expected" in i]


@pytest.mark.parametrize("path", DOCKERFILES, ids=IDS)
def test_every_toolchain_package_is_pinned_and_checked_in_its_stage(path):
    pinned = []
    checked_anywhere = " ".join(check for stage in _stages(path) for check in _checks(stage))
    for stage in _stages(path):
        arguments = _arg_defaults(stage)
        checks = " ".join(_checks(stage))
        for package in _installed_packages(stage):
            tool = next((t for t in TOOLCHAIN_PACKAGES if package.startswith(t)), None)
            if tool is None or package in COMPANIONS:
                continue
            argument = TOOLCHAIN_PACKAGES[tool]
            assert argument in arguments, f"{path.name}: {package} is installed without ARG {argument} in its stage"
            assert re.search(r"^\d+(\.\d+)*$", arguments[argument]), f"{argument} has no version by default"
            if tool in VERSIONED_NAMES:
                # The name pins it here; the toolchain's version is checked where it builds.
                assert package.startswith(VERSIONED_NAMES[tool]), f"{package}: use Debian's versioned {VERSIONED_NAMES[tool]}..."
                assert f"${{{argument}}}" in checked_anywhere, f"{path.name}: no `loadlab: expected` step checks {argument}"
            else:  # an unversioned name: only the check in this stage stands between it and another version
                assert f"${{{argument}}}" in checks, f"{path.name}: no `loadlab: expected` step checks {argument} after {package}"
            pinned.append(argument)
    assert pinned, f"{path.name} installs no toolchain it pins"


@pytest.mark.parametrize("path", DOCKERFILES, ids=IDS)
def test_each_check_passes_the_pinned_version_and_fails_loudly_on_another(path, tmp_path):
    checks = [(check, _arg_defaults(stage)) for stage in _stages(path) for check in _checks(stage)]
    assert checks
    # The JDK's ARG default is overridden by java-threads' variants (microbench builds from them too).
    jdks = [v["JDK_VERSION"] for v in servers.get_server("java-threads").variants.values()]
    for check, arguments in checks:
        settings = [{**arguments, "JDK_VERSION": jdk} for jdk in jdks] if "JDK_VERSION" in check else [arguments]
        for arguments_now in settings:
            for right in (True, False):
                result = _run_check(check, arguments_now, tmp_path / f"bin-{right}", right)
                if right:
                    assert result.returncode == 0 and "loadlab: " in result.stdout, (check, result.stderr)
                else:
                    assert result.returncode == 1, (check, result.stdout)
                    assert re.search(r"loadlab: expected .+, got .+", result.stderr), result.stderr


def _run_check(check: str, arguments: dict[str, str], bin_dir: Path, right: bool) -> subprocess.CompletedProcess:
    bin_dir.mkdir(exist_ok=True)
    for tool in set(re.findall(r'"?\b(go|java|rustc|cargo|php|python|nginx|wrk|node|erl)(?:\$\{[A-Z_]+\}|[0-9.]*)"? ', check)):
        good, bad, status = STAND_INS[tool]
        text = good.format(v=arguments[TOOL_ARG[tool]]) if right else bad
        names = {tool, f"{tool}{arguments.get(TOOL_ARG[tool], '')}"}
        for name in names:
            stand_in = bin_dir / name
            stand_in.write_text(f"#!/bin/sh\ncat <<'EOF' >&2\n{text}\nEOF\nexit {status}\n" if tool in ("java", "nginx")
                                else f"#!/bin/sh\ncat <<'EOF'\n{text}\nEOF\nexit {status}\n")
            stand_in.chmod(0o755)
    environment = {**arguments, "PATH": f"{bin_dir}:/usr/bin:/bin"}
    return subprocess.run(["/bin/sh", "-c", check], capture_output=True, text=True, env=environment, timeout=30)


def test_every_go_build_uses_the_same_toolchain():
    # The Go servers, vegeta and the microbenchmarks' spawn-go: one Go, so a claim about Go is about one Go.
    versions = {path.parent.name: _arg_defaults(stage)["GO_VERSION"]
                for path in DOCKERFILES for stage in _stages(path) if "GO_VERSION" in _arg_defaults(stage)}
    assert {"go-nethttp", "go-workerpool", "loadgen", "microbench-programs"} <= set(versions)
    assert len(set(versions.values())) == 1, versions


def test_the_jdk_variants_pin_a_jdk_each():
    variants = servers.get_server("java-threads").variants
    assert {name: args["JDK_VERSION"] for name, args in variants.items()} == {"jdk21": "21", "jdk25": "25"}


def test_a_go_mod_never_asks_for_a_newer_go_than_the_pinned_toolchain():
    pinned = tuple(int(x) for x in _arg_defaults(_stages(paths.SERVERS_DIR / "go-nethttp" / "Dockerfile")[0])["GO_VERSION"].split("."))
    for go_mod in [*paths.SERVERS_DIR.glob("*/go.mod"), *paths.SERVERS_DIR.glob("*/*/go.mod"), paths.ROOT / "microbench-programs" / "go.mod"]:
        wanted = re.search(r"^go (\d+)\.(\d+)", go_mod.read_text(), re.M)
        assert wanted and (int(wanted[1]), int(wanted[2])) <= pinned, go_mod


@pytest.mark.parametrize("path", DOCKERFILES, ids=IDS)
def test_go_never_fetches_another_toolchain(path):
    for stage in _stages(path):
        if "GO_VERSION" in _arg_defaults(stage):
            assert any("GOTOOLCHAIN=local" in instruction for instruction in stage), path
