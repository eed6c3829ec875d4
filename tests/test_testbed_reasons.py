"""Where the two-host test bed cannot be built, it says exactly why (the reason its tests skip with)."""

import subprocess

from loadlab.harness import testbed


def test_not_root_is_the_reason(monkeypatch):
    monkeypatch.setattr(testbed.os, "geteuid", lambda: 1000)
    assert testbed.unavailable() == ("the two-host test bed needs root (network namespaces, a veth pair and a "
                                     "second dockerd)")


def test_an_ip_without_netns_is_the_reason(monkeypatch):
    monkeypatch.setattr(testbed.os, "geteuid", lambda: 0)
    monkeypatch.setattr(testbed.shutil, "which", lambda program: f"/usr/bin/{program}")
    monkeypatch.setattr(testbed.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(
        a[0], 1, "", 'Object "netns" is unknown, try "ip help".'))
    assert testbed.unavailable() == '`ip netns` does not work here: Object "netns" is unknown, try "ip help".'


def test_a_missing_program_is_the_reason(monkeypatch):
    monkeypatch.setattr(testbed.os, "geteuid", lambda: 0)
    monkeypatch.setattr(testbed.shutil, "which", lambda program: None if program == "nsenter" else "/bin/x")
    assert testbed.unavailable() == "the two-host test bed needs `nsenter` on PATH"


def test_with_no_bed_up_status_says_so_and_nothing_is_left(capsys):
    from loadlab import cli

    if testbed.current() is not None:
        return  # a bed a user brought up is not this test's to judge
    assert cli.main(["testbed", "status"]) == 0
    assert capsys.readouterr().out.strip() == "no test bed is up"
    if testbed.unavailable() is None:
        assert testbed.leftovers() == []
