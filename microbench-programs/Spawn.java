// Spawn: what starting, parking and joining N Java threads costs, platform vs virtual.
//
// One file, no dependencies, JDK 21 and 25. Compiled in the image's build stage and
// run by spawn-java, which adds the flags the JDK needs; from source it runs as
//   JDK 21: java --enable-preview --source 21 --enable-native-access=ALL-UNNAMED Spawn.java ...
//   JDK 25: java --enable-native-access=ALL-UNNAMED Spawn.java ...
// On JDK 21 the FFM API (used for getrusage) is a preview, so javac marks every class
// of this file as needing --enable-preview: without it the JVM refuses to load Spawn.
//
// Usage: Spawn --mode platform|virtual [--bench sleepers|sqrt_latch|switches]
//              [--tasks N] [--warmup W] [--iterations I] [--sleep-ms M]
//
// Benchmarks (each prints one JSON line per iteration, warm-ups flagged "warmup":true):
//   sleepers    N threads each count down a "started" latch, then block on a
//               "release" latch. spawn_s: first start -> all started; memory,
//               threads and context switches read while all N are parked;
//               join_s: release -> every thread joined. Same task as spawn-go.
//   sqrt_latch  S5's benchmark: N threads each compute one Math.sqrt and count
//               down a latch; elapsed_s: first start -> latch released (the
//               threads are joined afterwards, untimed). Defaults: 5 warm-up +
//               10 measured iterations in one JVM, as JMH would.
//               peak_live_platform_threads: ThreadMXBean's peak over the
//               iteration (reset before it), live_platform_threads_before.
//   switches    S1-vthread-switches: N short blocking tasks (each Thread.sleep
//               of --sleep-ms), started and joined; kernel context switches of
//               the whole process over that interval, and over an idle interval
//               of the same length right after (background_*: the JVM's own
//               noise floor: GC, JIT and timer threads).
//
// Before the first iteration one thread of the mode is started, slept 1 ms and
// joined, and every probe is called once (prime()): class loading and the
// scheduler's creation are one-off costs, not per-task ones.
//
// Context switches, three ways (the kernel counts them per thread):
//   voluntary_/nonvoluntary_ctxt_switches_delta   getrusage(RUSAGE_SELF): every
//       thread of the process including those that exited meanwhile. The
//       headline: platform threads that ran and died keep their switches here.
//   live_threads_*   sum over /proc/self/task/*/status: only threads alive at
//       both reads' times, so it drops exited threads (and can even go negative).
//   self_status_*    /proc/self/status alone: the thread-group leader, which in
//       the java launcher is the primordial thread waiting for the JVM: ~0.
// getrusage is called through the FFM API; should that call fail (a libc
// without the symbol, a future JDK that blocks native access) the headline
// fields are null, ctxt_switches_source says why, and CPU times fall back to
// HotSpot's 10 ms-resolution figure.
//
// Memory: rss_* from /proc/self/status VmRSS; vm_size_* from VmSize (address
// space reserved: a platform thread's stack reservation shows here); heap_* is
// the Java heap in use (sleepers: after a System.gc() on both sides, so it is
// what stays live while parked: Thread objects and, for virtual threads, their
// stacks; sqrt_latch: without a GC, so allocation included);
// peak_rss_delta_bytes from VmHWM after resetting it through
// /proc/self/clear_refs (null when that write is refused).
//
// CPU: *_cpu_s / cpu_s is the process's user + system time over the same
// interval as the wall time beside it (getrusage, every thread): on a core
// shared with other work, wall time includes their turns, CPU time does not.

import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

public final class Spawn {
    private static final int MAX_TASKS = 1_000_000;

    public static void main(String[] args) throws Exception {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException error) {
            System.err.println("Spawn: " + error.getMessage());
            System.err.println("usage: Spawn --mode platform|virtual [--bench sleepers|sqrt_latch|switches]"
                    + " [--tasks N] [--warmup W] [--iterations I] [--sleep-ms M]");
            System.exit(2);
            return;
        }
        Thread.Builder builder = options.mode.equals("virtual") ? Thread.ofVirtual() : Thread.ofPlatform();
        prime(builder);
        int total = options.warmup + options.iterations;
        for (int i = 0; i < total; i++) {
            boolean warmup = i < options.warmup;
            Map<String, Object> line = header(options, warmup ? i : i - options.warmup, warmup);
            switch (options.bench) {
                case "sleepers" -> sleepers(builder, options.tasks, line);
                case "sqrt_latch" -> sqrtLatch(builder, options.tasks, line);
                case "switches" -> switches(builder, options.tasks, options.sleepMs, line);
                default -> throw new IllegalStateException(options.bench);
            }
            System.out.println(Json.write(line));
            System.out.flush();
        }
    }

    /**
     * One-off costs that are not per-task, paid before any baseline is read: loading the
     * classes (FFM linker, management beans, the virtual-thread scheduler and its timer),
     * creating the first carrier thread. One thread of the mode sleeps 1 ms and is joined.
     */
    static void prime(Thread.Builder builder) throws Exception {
        Rusage.read();
        Snapshot.take();
        usedHeap();
        threadStackSizeKb();
        resetPeakRss();
        CountDownLatch latch = new CountDownLatch(1);
        Thread thread = builder.start(() -> {
            try {
                Thread.sleep(1);
            } catch (InterruptedException error) {
                Thread.currentThread().interrupt();
            }
            latch.countDown();
        });
        latch.await();
        thread.join();
    }

    static Map<String, Object> header(Options options, int iteration, boolean warmup) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("runtime", "java");
        line.put("version", Runtime.version().toString());
        line.put("model", options.mode);
        line.put("bench", options.bench);
        line.put("tasks", options.tasks);
        line.put("iteration", iteration);
        line.put("warmup", warmup);
        line.put("available_processors", Runtime.getRuntime().availableProcessors());
        line.put("max_heap_bytes", Runtime.getRuntime().maxMemory());
        List<String> collectors = new ArrayList<>();
        for (GarbageCollectorMXBean bean : ManagementFactory.getGarbageCollectorMXBeans()) {
            collectors.add(bean.getName());
        }
        line.put("gc", String.join(",", collectors));
        return line;
    }

    // --- the benchmarks -------------------------------------------------------------

    static void sleepers(Thread.Builder builder, int n, Map<String, Object> line) throws Exception {
        Thread[] threads = new Thread[n];
        CountDownLatch started = new CountDownLatch(n);
        CountDownLatch release = new CountDownLatch(1);
        Runnable task = () -> {
            started.countDown();
            awaitUninterruptibly(release);
        };
        System.gc();
        long heapBefore = usedHeap();
        Snapshot before = Snapshot.take();

        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            threads[i] = builder.start(task);
        }
        started.await();
        long spawnNs = System.nanoTime() - t0;

        Snapshot parked = Snapshot.takeAfter();
        System.gc(); // what stays on the heap while parked: Thread objects, virtual threads' stacks
        long heapParked = usedHeap();

        long cpu1 = processCpuNs();
        long t1 = System.nanoTime();
        release.countDown();
        for (Thread thread : threads) {
            thread.join();
        }
        long joinNs = System.nanoTime() - t1;
        long joinCpuNs = processCpuNs() - cpu1;

        line.put("spawn_s", seconds(spawnNs));
        line.put("join_s", seconds(joinNs));
        line.put("spawn_cpu_s", seconds(parked.cpuNs - before.cpuNs));
        line.put("join_cpu_s", seconds(joinCpuNs));
        line.put("minor_faults_delta", parked.minorFaults != null && before.minorFaults != null
                ? parked.minorFaults - before.minorFaults : null);
        line.put("rss_delta_bytes", parked.rssBytes - before.rssBytes);
        line.put("vm_size_delta_bytes", parked.vmSizeBytes - before.vmSizeBytes);
        line.put("heap_delta_bytes", heapParked - heapBefore);
        line.put("threads_before", before.threads);
        line.put("threads", parked.threads);
        putSwitches(line, "", before, parked);
        line.put("thread_stack_size_kb", threadStackSizeKb());
    }

    static void sqrtLatch(Thread.Builder builder, int n, Map<String, Object> line) throws Exception {
        Thread[] threads = new Thread[n];
        double[] results = new double[n];
        CountDownLatch latch = new CountDownLatch(n);
        System.gc();
        long heapBefore = usedHeap();
        boolean peakReset = resetPeakRss();
        // The JVM's own count of live platform threads (virtual threads are not in it, their carriers are):
        // how many of the N platform threads were alive at once.
        ThreadMXBean threadBean = ManagementFactory.getThreadMXBean();
        int liveBefore = threadBean.getThreadCount();
        threadBean.resetPeakThreadCount();
        Snapshot before = Snapshot.take();

        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            final int k = i;
            threads[i] = builder.start(() -> {
                results[k] = Math.sqrt(k);
                latch.countDown();
            });
        }
        latch.await();
        long elapsedNs = System.nanoTime() - t0;

        Snapshot released = Snapshot.takeAfter();
        long heapReleased = usedHeap(); // no GC: what the iteration allocated and still holds
        for (Thread thread : threads) {
            thread.join();
        }
        Snapshot joined = Snapshot.takeAfter();
        double checksum = 0;
        for (double r : results) {
            checksum += r; // every result is used, so no sqrt can be optimised away
        }

        line.put("elapsed_s", seconds(elapsedNs));
        line.put("cpu_s", seconds(released.cpuNs - before.cpuNs));
        line.put("rss_delta_bytes", released.rssBytes - before.rssBytes);
        line.put("peak_rss_delta_bytes", peakReset ? joined.hwmBytes - before.rssBytes : null);
        line.put("vm_size_delta_bytes", released.vmSizeBytes - before.vmSizeBytes);
        line.put("heap_delta_bytes", heapReleased - heapBefore);
        line.put("threads_before", before.threads);
        line.put("threads", released.threads);
        line.put("live_platform_threads_before", liveBefore);
        line.put("peak_live_platform_threads", threadBean.getPeakThreadCount());
        putSwitches(line, "", before, released);
        line.put("checksum", checksum);
    }

    static void switches(Thread.Builder builder, int n, int sleepMs, Map<String, Object> line) throws Exception {
        Thread[] threads = new Thread[n];
        Runnable task = () -> {
            try {
                Thread.sleep(sleepMs);
            } catch (InterruptedException error) {
                Thread.currentThread().interrupt();
            }
        };
        System.gc();
        Snapshot before = Snapshot.take();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            threads[i] = builder.start(task);
        }
        for (Thread thread : threads) {
            thread.join();
        }
        long elapsedNs = System.nanoTime() - t0;
        Snapshot after = Snapshot.takeAfter();

        // The same length of time with nothing to do: the JVM's own switches.
        Snapshot idleBefore = Snapshot.take();
        long idleStart = System.nanoTime();
        Thread.sleep(Math.max(1, elapsedNs / 1_000_000), (int) (elapsedNs % 1_000_000));
        long idleNs = System.nanoTime() - idleStart;
        Snapshot idleAfter = Snapshot.takeAfter();

        line.put("sleep_ms", sleepMs);
        line.put("elapsed_s", seconds(elapsedNs));
        line.put("cpu_s", seconds(after.cpuNs - before.cpuNs));
        line.put("threads_before", before.threads);
        line.put("threads", after.threads);
        putSwitches(line, "", before, after);
        line.put("background_s", seconds(idleNs));
        putSwitches(line, "background_", idleBefore, idleAfter);
    }

    // --- measurement helpers ----------------------------------------------------------

    static void putSwitches(Map<String, Object> line, String prefix, Snapshot a, Snapshot b) {
        boolean rusage = a.rusageVoluntary != null && b.rusageVoluntary != null;
        line.put(prefix + "voluntary_ctxt_switches_delta", rusage ? b.rusageVoluntary - a.rusageVoluntary : null);
        line.put(prefix + "nonvoluntary_ctxt_switches_delta",
                rusage ? b.rusageNonvoluntary - a.rusageNonvoluntary : null);
        line.put(prefix + "live_threads_voluntary_ctxt_switches_delta", b.liveVoluntary - a.liveVoluntary);
        line.put(prefix + "live_threads_nonvoluntary_ctxt_switches_delta", b.liveNonvoluntary - a.liveNonvoluntary);
        line.put(prefix + "self_status_voluntary_ctxt_switches_delta", b.selfVoluntary - a.selfVoluntary);
        line.put(prefix + "self_status_nonvoluntary_ctxt_switches_delta", b.selfNonvoluntary - a.selfNonvoluntary);
        if (prefix.isEmpty()) {
            line.put("ctxt_switches_source", rusage ? "getrusage(RUSAGE_SELF)" : "unavailable: " + Rusage.problem());
        }
    }

    static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException error) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    static long usedHeap() {
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** CPU time of every thread of the process: getrusage (microseconds) where available. */
    static long processCpuNs() {
        long[] rusage = Rusage.read();
        if (rusage != null) {
            return rusage[2];
        }
        // Fallback: HotSpot's own figure (clock-tick resolution, 10 ms, on Linux).
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean hotspot) {
            return hotspot.getProcessCpuTime();
        }
        return -1;
    }

    static Long threadStackSizeKb() {
        try {
            var bean = ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
            return Long.parseLong(bean.getVMOption("ThreadStackSize").getValue());
        } catch (RuntimeException error) {
            return null;
        }
    }

    /** Resets VmHWM to the current RSS (Linux 4.0+); false when the kernel refuses. */
    static boolean resetPeakRss() {
        try {
            Files.writeString(Path.of("/proc/self/clear_refs"), "5");
            return true;
        } catch (IOException | SecurityException error) {
            return false;
        }
    }

    static double seconds(long nanos) {
        return nanos / 1e9;
    }

    /** What the kernel says about this process at one moment. */
    static final class Snapshot {
        long rssBytes;
        long hwmBytes;
        long vmSizeBytes;
        long threads;
        long selfVoluntary;
        long selfNonvoluntary;
        long liveVoluntary;
        long liveNonvoluntary;
        Long rusageVoluntary;
        Long rusageNonvoluntary;
        Long minorFaults;
        long cpuNs;

        /**
         * For the start of an interval: /proc first, then getrusage (the counters the
         * headline figures come from) last, right before the interval begins.
         */
        static Snapshot take() throws IOException {
            Snapshot s = new Snapshot();
            s.readProc();
            s.readCounters();
            return s;
        }

        /**
         * For the end of an interval: getrusage first, right after it ends, then /proc
         * (reading 10,000 threads' status files takes a while; that must not count).
         */
        static Snapshot takeAfter() throws IOException {
            Snapshot s = new Snapshot();
            s.readCounters();
            s.readProc();
            return s;
        }

        private void readCounters() {
            long[] rusage = Rusage.read();
            if (rusage != null) {
                rusageVoluntary = rusage[0];
                rusageNonvoluntary = rusage[1];
                cpuNs = rusage[2];
                minorFaults = rusage[3];
            } else {
                cpuNs = processCpuNs();
            }
        }

        private void readProc() throws IOException {
            Map<String, Long> self = status(Path.of("/proc/self/status"));
            rssBytes = self.getOrDefault("VmRSS", 0L) * 1024;
            hwmBytes = self.getOrDefault("VmHWM", 0L) * 1024;
            vmSizeBytes = self.getOrDefault("VmSize", 0L) * 1024;
            threads = self.getOrDefault("Threads", 0L);
            selfVoluntary = self.getOrDefault("voluntary_ctxt_switches", 0L);
            selfNonvoluntary = self.getOrDefault("nonvoluntary_ctxt_switches", 0L);
            try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
                for (Path task : tasks) {
                    Map<String, Long> thread;
                    try {
                        thread = status(task.resolve("status"));
                    } catch (IOException exited) {
                        continue;
                    }
                    liveVoluntary += thread.getOrDefault("voluntary_ctxt_switches", 0L);
                    liveNonvoluntary += thread.getOrDefault("nonvoluntary_ctxt_switches", 0L);
                }
            }
        }

        static Map<String, Long> status(Path path) throws IOException {
            Map<String, Long> values = new LinkedHashMap<>();
            for (String row : Files.readAllLines(path)) {
                int colon = row.indexOf(':');
                if (colon < 0) {
                    continue;
                }
                String[] fields = row.substring(colon + 1).trim().split("\\s+");
                try {
                    values.put(row.substring(0, colon), Long.parseLong(fields[0]));
                } catch (NumberFormatException notANumber) {
                    // e.g. Name:, State:, Cpus_allowed: (hex)
                }
            }
            return values;
        }
    }

    /** Command line. */
    static final class Options {
        String mode;
        String bench = "sleepers";
        int tasks = 10_000;
        Integer warmup;
        Integer iterations;
        int sleepMs = 1;

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String name = args[i];
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(name + " needs a value");
                }
                String value = args[++i];
                switch (name) {
                    case "--mode" -> o.mode = value;
                    case "--bench" -> o.bench = value;
                    case "--tasks" -> o.tasks = integer(name, value, 1, MAX_TASKS);
                    case "--warmup" -> o.warmup = integer(name, value, 0, 1000);
                    case "--iterations" -> o.iterations = integer(name, value, 1, 1000);
                    case "--sleep-ms" -> o.sleepMs = integer(name, value, 0, 10_000);
                    default -> throw new IllegalArgumentException("unknown option " + name);
                }
            }
            if (!"platform".equals(o.mode) && !"virtual".equals(o.mode)) {
                throw new IllegalArgumentException("--mode must be platform or virtual, not " + o.mode);
            }
            if (!List.of("sleepers", "sqrt_latch", "switches").contains(o.bench)) {
                throw new IllegalArgumentException("--bench must be sleepers, sqrt_latch or switches, not " + o.bench);
            }
            boolean jmhStyle = o.bench.equals("sqrt_latch");
            if (o.warmup == null) {
                o.warmup = jmhStyle ? 5 : o.bench.equals("switches") ? 2 : 0;
            }
            if (o.iterations == null) {
                o.iterations = jmhStyle ? 10 : o.bench.equals("switches") ? 5 : 1;
            }
            return o;
        }

        static int integer(String name, String value, int low, int high) {
            try {
                int n = Integer.parseInt(value);
                if (n >= low && n <= high) {
                    return n;
                }
            } catch (NumberFormatException ignored) {
                // reported below
            }
            throw new IllegalArgumentException(name + " must be an integer from " + low + " to " + high + ", not " + value);
        }
    }

    /** A JSON object writer for flat maps of strings, numbers, booleans and nulls. */
    static final class Json {
        static String write(Map<String, Object> map) {
            StringBuilder out = new StringBuilder("{");
            boolean first = true;
            for (Map.Entry<String, Object> entry : map.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                string(out, entry.getKey());
                out.append(':');
                Object value = entry.getValue();
                if (value == null) {
                    out.append("null");
                } else if (value instanceof String text) {
                    string(out, text);
                } else if (value instanceof Double d) {
                    out.append(Double.isFinite(d) ? d.toString() : "null"); // shortest round-trip form
                } else {
                    out.append(value); // Integer, Long, Boolean
                }
            }
            return out.append('}').toString();
        }

        static void string(StringBuilder out, String text) {
            out.append('"');
            for (char c : text.toCharArray()) {
                switch (c) {
                    case '"' -> out.append("\\\"");
                    case '\\' -> out.append("\\\\");
                    default -> {
                        if (c < 0x20) {
                            out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                        } else {
                            out.append(c);
                        }
                    }
                }
            }
            out.append('"');
        }
    }
}

/**
 * getrusage(RUSAGE_SELF) through the FFM API: the process's context switches and CPU time
 * summed over every thread, exited ones included. Any failure to link or call it makes
 * read() return null (problem() says why) instead of stopping the benchmark.
 */
final class Rusage {
    // struct rusage on 64-bit Linux: ru_utime and ru_stime (struct timeval: seconds and
    // microseconds, 8 bytes each), then 14 longs: ru_minflt is the 5th, ru_nvcsw the 13th,
    // ru_nivcsw the 14th.
    static final long SIZE = 144;
    static final long UTIME_OFFSET = 0;
    static final long STIME_OFFSET = 16;
    static final long MINFLT_OFFSET = 32 + 4 * 8;
    static final long NVCSW_OFFSET = 32 + 12 * 8;
    static final long NIVCSW_OFFSET = 32 + 13 * 8;
    static final int RUSAGE_SELF = 0;

    private static volatile String problem;

    static String problem() {
        return problem;
    }

    /** {voluntary switches, nonvoluntary switches, CPU ns (user + system), minor faults}, or null (problem() says why). */
    static long[] read() {
        try {
            return RusageFfm.read();
        } catch (Throwable error) { // e.g. no getrusage symbol, or native access denied
            if (problem == null) {
                problem = error.getClass().getSimpleName() + ": " + error.getMessage();
            }
            return null;
        }
    }
}

/** The only code that touches the FFM API (java.lang.foreign). */
final class RusageFfm {
    private static final java.lang.invoke.MethodHandle GETRUSAGE;

    static {
        java.lang.foreign.Linker linker = java.lang.foreign.Linker.nativeLinker();
        GETRUSAGE = linker.downcallHandle(
                linker.defaultLookup().find("getrusage").orElseThrow(),
                java.lang.foreign.FunctionDescriptor.of(
                        java.lang.foreign.ValueLayout.JAVA_INT,
                        java.lang.foreign.ValueLayout.JAVA_INT,
                        java.lang.foreign.ValueLayout.ADDRESS));
    }

    static long[] read() throws Throwable {
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            java.lang.foreign.MemorySegment usage = arena.allocate(Rusage.SIZE, 8);
            int rc = (int) GETRUSAGE.invokeExact(Rusage.RUSAGE_SELF, usage);
            if (rc != 0) {
                throw new IllegalStateException("getrusage returned " + rc);
            }
            return new long[] {
                field(usage, Rusage.NVCSW_OFFSET),
                field(usage, Rusage.NIVCSW_OFFSET),
                timevalNs(usage, Rusage.UTIME_OFFSET) + timevalNs(usage, Rusage.STIME_OFFSET),
                field(usage, Rusage.MINFLT_OFFSET)
            };
        }
    }

    private static long field(java.lang.foreign.MemorySegment usage, long offset) {
        return usage.get(java.lang.foreign.ValueLayout.JAVA_LONG, offset);
    }

    private static long timevalNs(java.lang.foreign.MemorySegment usage, long offset) {
        return field(usage, offset) * 1_000_000_000L + field(usage, offset + 8) * 1_000L;
    }
}

