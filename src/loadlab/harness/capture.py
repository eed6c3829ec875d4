"""Profiles and GC records captured around a trial's measured window.

Each profiler is an option of a trial (`TrialConfig.profilers`); what it
captures lands in `trials/<n>/profiles/`, and `profiles/captures.json` says
for each one whether it ran or why it was skipped (tool missing, no
privilege, the runtime lacks it). Nothing is skipped silently.

| profiler   | runtime | what                                                        |
| ---------- | ------- | ----------------------------------------------------------- |
| pprof      | Go      | CPU profile over the window; heap and goroutine profiles after |
| go-metrics | Go      | /debug/vars (runtime/metrics GC histograms) before and after, once a second in between; the server's established connections once a second from the kernel's socket table |
| gctrace    | Go      | the server log's `gc N @...` lines (always on in our images) |
| jfr        | Java    | the continuous JFR recording dumped after the window, cut by `jfr scrub` to GC, heap, threads, pinning and execution samples: jfr-events.jfr.gz (before 2026-11-25: their `jfr print --json`, jfr.json.gz and jfr-samples.json.gz, which the committed runs keep recompressed as .json.xz); `jfr summary` of the whole recording |
| jfr-locks  | Java    | with jfr: the recording's blocking events (jdk.ThreadPark, jdk.JavaMonitorEnter, jdk.ThreadSleep; 10 ms and longer under settings=profile), cut by `jfr scrub`: jfr-locks.jfr.gz |
| gclog      | Java    | the unified GC log (/tmp/gc.log in the container)           |
| perf       | any     | `perf record -e cpu-clock --call-graph dwarf` on the server's processes, from the host |
| py-spy     | Python  | `py-spy record --format raw` on the server process, from the host |
| uprobes    | Go      | calls of runtime.gopark, runtime.mcall and runtime.findRunnable over the window, counted with uprobes from the host (uprobe-counts.json) |
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import threading
import time
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from loadlab.harness.container import host_pid
from loadlab.profiles import jfr_captures
from loadlab.rundir import write_bytes_atomic, write_json_atomic, write_text_atomic

# The JFR events the tables read; `jfr scrub` keeps only these in the copy of the recording that is kept.
JFR_EVENTS = ",".join(jfr_captures.RUNTIME_EVENTS + jfr_captures.SAMPLE_EVENTS)
JFR_LOCK_EVENTS = ",".join(jfr_captures.LOCK_EVENTS)
# The JDK's tools that dump and cut the recording after the window are JVMs of their own (jcmd, jfr), one per
# call: C1 alone and the serial collector start them sooner. With one exec per step fewer, jfr + jfr-locks after
# the window took 4.7 s instead of 9.9 s here (medians of 5, alternated, on a JDK 21 recording of 2.6 MB). They are
# the tools' flags, never the server's: the window is over, and the server's JVM runs as it was started.
JDK_TOOL_FLAGS = "-J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC"
PERF_FREQUENCY_HZ = 99
PYSPY_RATE_HZ = 99
# DWARF unwinding (a copy of each sample's top 16 KiB of user stack, unwound with .eh_frame): release builds
# of Rust and Debian's libc keep no frame pointers, so `-g` stopped every Rust stack at its first user frame.
PERF_CALL_GRAPH = "dwarf,16384"
EXPVAR_SERIES = "expvar-series.jsonl.gz"  # JSON lines, gzip
# An overloaded Go server answers /debug/vars only when the handler's goroutine reaches the head of the run
# queue: at 5x its capacity (02 at 500 req/s) that took more than 5 s, and a series that gave up on the first
# timeout ended after 1 or 2 samples, so its "peak" goroutine count was the idle one.
EXPVAR_TIMEOUT_S = 15.0


UPROBE_COUNTS = "uprobe-counts.json"  # {window_s, calls: {function: n}, calls_per_s, missing}
CONNECTION_SERIES = "connections-series.jsonl.gz"  # JSON lines {t_unix_s, established}, gzip
TCP_ESTABLISHED = "01"  # the st column of /proc/net/tcp (include/net/tcp_states.h)


def established_connections(pid: int, port: int) -> int:
    """TCP connections in state ESTABLISHED whose local port is `port`, in the network namespace of `pid`.

    Read from the kernel's socket tables (/proc/PID/net/tcp and tcp6), so it
    needs nothing from the server: an overloaded one is counted as well as an
    idle one. net/http serves every accepted connection on a goroutine of its
    own, so for a Go server this is a lower bound on its goroutines.
    """
    count = 0
    for table in ("tcp", "tcp6"):
        path = Path(f"/proc/{pid}/net/{table}")
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            if len(fields) > 3 and fields[3] == TCP_ESTABLISHED and int(fields[1].rsplit(":", 1)[1], 16) == port:
                count += 1
    return count


def _kernel_counter(pid: int, table: str, section: str, name: str) -> int | None:
    """One counter of the kernel's SNMP-style tables (/proc/PID/net/snmp or netstat: a header line of names, then
    a line of values, per section) in the network namespace of `pid`; None when it cannot be read."""
    try:
        lines = [line.split() for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()
                 if line.startswith(f"{section}:")]
    except OSError:
        return None
    if len(lines) < 2 or name not in lines[0]:
        return None
    return int(lines[1][lines[0].index(name)])


def tcp_passive_opens(pid: int) -> int | None:
    """The kernel's count of TCP connections accepted (Tcp PassiveOpens) in the network namespace of `pid`.

    Servers run with host networking, so this counts every connection the
    host's listening sockets accepted: the difference across a window is the
    server's accepted connections plus the few the harness opens itself.
    None when the count cannot be read (no such process: an engine elsewhere).
    """
    return _kernel_counter(pid, "snmp", "Tcp", "PassiveOpens")


def listen_overflows(pid: int) -> int | None:
    """The kernel's count of connections dropped because a listen queue was full (TcpExt ListenOverflows), in
    the network namespace of `pid`; None when it cannot be read.

    Under a connection per request, a burst of handshakes beyond the listen
    queue (`net.core.somaxconn`, 4,096 here) is dropped, and each client
    waits a SYN retransmission (1 s, then 3 s, ...) before it is served: the
    difference across a window says how often that happened.
    """
    return _kernel_counter(pid, "netstat", "TcpExt", "ListenOverflows")


class ServerGone(Exception):
    """A polled server stopped answering for good (refused or reset, not merely late)."""


def is_timeout(error: OSError) -> bool:
    """True for a request that timed out (read or connect), not for a server that is gone."""
    reason = getattr(error, "reason", None)  # urllib wraps connect errors in URLError
    return isinstance(error, TimeoutError) or isinstance(reason, TimeoutError)


@dataclass
class Capture:
    """One trial's captures: `start()` before the window, `finish()` after."""

    requested: tuple[str, ...]
    supported: tuple[str, ...]
    session: object  # ServerSession
    directory: Path
    window_s: float
    status: dict = field(default_factory=dict)
    _threads: list = field(default_factory=list)
    # Set when the trial fails mid-window, so polling captures stop early.
    _stop: threading.Event = field(default_factory=threading.Event)
    finished: bool = False

    def _wanted(self, name: str) -> bool:
        if name not in self.requested:
            return False
        if name not in self.supported:
            self.status[name] = {"status": "skipped", "reason": f"{self.session.spec.name} ({self.session.spec.runtime}) does not offer {name}"}
            return False
        return True

    def _background(self, name: str, work) -> None:
        def run():
            try:
                work()
                self.status.setdefault(name, {"status": "ok"})
            except Exception as error:  # a capture must never fail the trial
                self.status[name] = {"status": "skipped", "reason": f"{type(error).__name__}: {error}"}

        thread = threading.Thread(target=run, name=f"capture-{name}", daemon=True)
        thread.start()
        self._threads.append(thread)

    def _now(self, name: str, work) -> None:
        try:
            work()
            self.status.setdefault(name, {"status": "ok"})
        except Exception as error:
            self.status[name] = {"status": "skipped", "reason": f"{type(error).__name__}: {error}"}

    def _url(self, target: str) -> str:
        return self.session.url(target)

    def _fetch(self, target: str, timeout_s: float) -> bytes:
        with urllib.request.urlopen(self._url(target), timeout=timeout_s) as response:
            return response.read()

    def _server_pid(self) -> int:
        self.session.container.reload()
        pid = host_pid(self.session.container)
        if not pid or not Path(f"/proc/{pid}").exists():
            raise RuntimeError("the server's processes are not visible from this host (engine elsewhere?)")
        return pid

    # ---- before the window ------------------------------------------------
    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        seconds = max(1, int(round(self.window_s)))
        if self._wanted("go-metrics"):
            self._now("go-metrics", lambda: write_bytes_atomic(self.directory / "expvar-before.json", self._fetch("/debug/vars", 10)))
            self._background("go-metrics", lambda: self._expvar_series(seconds))
            self._background("connections", lambda: self._connection_series(seconds))
        if self._wanted("pprof"):
            self._background("pprof", lambda: write_bytes_atomic(
                self.directory / "cpu.pb.gz", self._fetch(f"/debug/pprof/profile?seconds={seconds}", seconds + 30)))
        if self._wanted("perf"):
            self._background("perf", lambda: self._perf(seconds))
        if self._wanted("py-spy"):
            self._background("py-spy", lambda: self._pyspy(seconds))
        if self._wanted("uprobes"):
            self._background("uprobes", lambda: self._uprobes(seconds))

    def _each_second(self, seconds: int, name: str, sample) -> None:
        """Call `sample(remaining_s)` once a second through the window and write what it gave as gzip JSON lines.

        `sample` returns a dict (kept, stamped with t_unix_s), None (no sample yet: ask again at once) or
        raises ServerGone (the series ends; the trial will say why).
        """
        lines = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self._stop.is_set():
            started = time.monotonic()
            try:
                document = sample(deadline - started)
            except ServerGone:
                break
            if document is None:
                continue
            lines.append(json.dumps({"t_unix_s": time.time(), **document}))
            if self._stop.wait(max(0.0, 1.0 - (time.monotonic() - started))):
                break
        # gzip: a 20 s window of 24 trials was 7 MB of repetitive JSON, a quarter of the reference data's budget.
        write_bytes_atomic(self.directory / name, gzip.compress(("\n".join(lines) + "\n").encode()))

    def _expvar_series(self, seconds: int) -> None:
        """Scheduler and heap metrics once a second through the window."""
        def sample(remaining_s: float) -> dict | None:
            try:
                document = json.loads(self._fetch("/debug/vars", min(EXPVAR_TIMEOUT_S, max(1.0, remaining_s))))
            except OSError as error:
                if is_timeout(error):
                    return None  # overloaded: /debug/vars waits behind the backlog; a late sample beats none
                raise ServerGone from error
            return {"gc": {k: v for k, v in (document.get("gc") or {}).items()
                           if k.startswith(("/sched/", "/gc/heap/", "/gc/cycles/", "/memory/classes/total"))}}

        self._each_second(seconds, EXPVAR_SERIES, sample)

    def _connection_series(self, seconds: int) -> None:
        """The server's established connections once a second through the window (see established_connections)."""
        pid, port = self._server_pid(), int(self.session.port)
        self._each_second(seconds, CONNECTION_SERIES, lambda remaining_s: {"established": established_connections(pid, port)})

    def _perf(self, seconds: int) -> None:
        perf = shutil.which("perf")
        if perf is None:
            raise RuntimeError("perf is not installed on this host (Debian: apt-get install linux-perf)")
        pid = self._server_pid()
        # Every process of the container: children of the init process too (nginx workers, uvicorn).
        pids = subprocess.run(["pgrep", "-d", ",", "-P", str(pid)], capture_output=True, text=True).stdout.strip()
        target = ",".join(p for p in (str(pid), pids) if p)
        data = self.directory / "perf.data"
        record = subprocess.run(
            [perf, "record", "-e", "cpu-clock", "-F", str(PERF_FREQUENCY_HZ), "--call-graph", PERF_CALL_GRAPH, "-p", target,
             "-o", str(data),
             "--", "sleep", str(seconds)], capture_output=True, text=True, timeout=seconds + 60,
        )
        write_text_atomic(self.directory / "perf-record.log", f"pids {target}\n{record.stdout}{record.stderr}")
        if record.returncode != 0 or not data.exists():
            raise RuntimeError(f"perf record failed: {(record.stderr or record.stdout).strip()[-400:]}")
        script = subprocess.run([perf, "script", "-i", str(data)], capture_output=True, timeout=600)
        if script.returncode != 0:
            raise RuntimeError(f"perf script failed: {script.stderr.decode(errors='replace')[-400:]}")
        write_bytes_atomic(self.directory / "perf-script.txt.gz", gzip.compress(script.stdout))
        data.unlink()

    def _pyspy(self, seconds: int) -> None:
        import sys

        pyspy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        if not Path(pyspy).exists():
            raise RuntimeError("py-spy is not installed (pip install py-spy)")
        pid = self._server_pid()
        children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
        output = self.directory / "py-spy-raw.txt"
        result = subprocess.run(
            [pyspy, "record", "--pid", str(pid), "--format", "raw", "--duration", str(seconds), "--rate",
             str(PYSPY_RATE_HZ), "--nonblocking", "--output", str(output)] + (["--subprocesses"] if children else []),
            capture_output=True, text=True, timeout=seconds + 60,
        )
        if result.returncode != 0 or not output.exists():
            raise RuntimeError(f"py-spy failed: {(result.stderr or result.stdout).strip()[-400:]}")

    # ---- after the window -------------------------------------------------
    def _uprobes(self, seconds: int) -> None:
        from loadlab.harness import uprobes

        started = time.monotonic()
        binary = uprobes.host_binary(self._server_pid())
        probes = uprobes.add(binary, uprobes.GO_SCHEDULER_FUNCTIONS, f"loadlab_{uuid.uuid4().hex[:8]}")
        try:
            # Adding the probes took part of the window; count only inside it (the load stops at its end).
            counted = uprobes.count(probes, max(1.0, seconds - (time.monotonic() - started)))
        finally:
            uprobes.remove(probes)
        write_json_atomic(self.directory / UPROBE_COUNTS, {**counted, "binary_on_host": str(binary)})

    def finish(self, failure_reason: str | None = None) -> dict:
        """Join the captures and collect the after-window ones; write captures.json. Safe to call twice.

        With `failure_reason` (the trial failed before or during the window),
        polling captures are stopped, nothing more is fetched from the server,
        and every capture that did not finish is recorded as skipped with why.
        """
        if self.finished:
            return self.status
        self.finished = True
        if failure_reason is not None:
            self._stop.set()
        for thread in self._threads:
            thread.join(timeout=self.window_s + 120)
        if failure_reason is not None:
            for name in self.requested:
                self.status.setdefault(name, {"status": "skipped", "reason": f"the trial failed ({failure_reason})"})
            self.directory.mkdir(parents=True, exist_ok=True)
            write_json_atomic(self.directory / "captures.json", self.status)
            return self.status
        container = self.session.container
        if self._wanted("go-metrics"):
            self._now("go-metrics", lambda: write_bytes_atomic(self.directory / "expvar-after.json", self._fetch("/debug/vars", 10)))
        if self._wanted("pprof"):
            self._now("pprof", lambda: (
                write_bytes_atomic(self.directory / "heap.pb.gz", self._fetch("/debug/pprof/heap", 30)),
                write_bytes_atomic(self.directory / "goroutine.pb.gz", self._fetch("/debug/pprof/goroutine", 30)),
            ))
        if self._wanted("gctrace"):
            self._now("gctrace", lambda: write_text_atomic(
                self.directory / "gctrace.txt",
                "".join(line + "\n" for line in container.logs(stdout=False, stderr=True).decode(errors="replace").splitlines()
                        if line.startswith("gc ")),
            ))
        if self._wanted("jfr"):
            self._now("jfr", self._jfr)
        if self._wanted("jfr-locks"):
            self._now("jfr-locks", self._jfr_locks)
        if self._wanted("gclog"):
            self._now("gclog", lambda: write_bytes_atomic(self.directory / "gc.log.gz", gzip.compress(self._exec(["cat", "/tmp/gc.log"]))))
        write_json_atomic(self.directory / "captures.json", self.status)
        return self.status

    def _exec(self, argv: list[str]) -> bytes:
        result = self.session.container.exec_run(argv, demux=True)
        stdout, stderr = result.output if isinstance(result.output, tuple) else (result.output, b"")
        if result.exit_code != 0:
            raise RuntimeError(f"{' '.join(argv)} exited {result.exit_code}: {(stderr or b'').decode(errors='replace')[-400:]}")
        return stdout or b""

    def _jfr(self) -> None:
        # One exec for the dump and the summary of the whole recording (its stdout is the summary's): each exec
        # is a round trip to the engine.
        summary = self._exec(["sh", "-c", f"jcmd {JDK_TOOL_FLAGS} 1 JFR.dump name=loadlab filename=/tmp/loadlab.jfr"
                                          f" >&2 && jfr {JDK_TOOL_FLAGS} summary /tmp/loadlab.jfr"])
        write_bytes_atomic(self.directory / "jfr-summary.txt", summary)
        # The recording itself, cut to the events the tables read: ~10 times smaller than their `jfr print
        # --json`, with whole stacks, and read without a JVM (profiles.jfr_recording). `jfr scrub` runs inside
        # the image: the JDK that wrote the file rewrites it.
        self._keep_recording(JFR_EVENTS, jfr_captures.RECORDING_FILE)

    def _jfr_locks(self) -> None:
        if not self._wanted("jfr") or self.status.get("jfr", {}).get("status") != "ok":
            raise RuntimeError("jfr-locks reads the recording the jfr capture dumps: request jfr too")
        self._keep_recording(JFR_LOCK_EVENTS, jfr_captures.LOCK_RECORDING_FILE)

    def _keep_recording(self, events: str, name: str) -> None:
        """`jfr scrub` the dumped recording to `events` and keep the copy as `name` (gzip), in one exec: the scrub's
        own output goes to stderr, so stdout is the copy; the copy is removed from the container's /tmp."""
        kept = f"/tmp/loadlab-{uuid.uuid4().hex[:8]}.jfr"
        copy = self._exec(["sh", "-c", f"jfr {JDK_TOOL_FLAGS} scrub --include-events {events} /tmp/loadlab.jfr {kept}"
                                       f" >&2 && cat {kept}; status=$?; rm -f {kept}; exit $status"])
        write_bytes_atomic(self.directory / name, gzip.compress(copy, compresslevel=9))


def capture_for(config, session, directory: Path) -> Capture | None:
    if not config.profilers:
        return None
    return Capture(tuple(config.profilers), session.spec.profilers, session, directory, config.duration_s)
