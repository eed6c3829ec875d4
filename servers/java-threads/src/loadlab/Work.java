package loadlab;

/** What /cpu, /io and /mixed do. */
final class Work {
    static final long CPU_SEED = 0xcbf29ce484222325L; // the FNV-1a offset basis

    private Work() {}

    /**
     * The contract's xorshift loop. Java's long arithmetic already wraps modulo
     * 2^64 and `>>>` is the logical shift; the result is read as unsigned.
     */
    static long cpuHash(long rounds) {
        long x = CPU_SEED;
        for (long i = 0; i < rounds; i++) {
            x ^= i;
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    /**
     * Waits `ms` milliseconds by blocking the current thread, as thread-per-request
     * does. With a `monitor` (PIN_ON_IO=true) the sleep happens while holding it:
     * on JDK 21 a virtual thread cannot unmount inside `synchronized`, so it pins
     * its carrier for the whole wait (JFR jdk.VirtualThreadPinned); since JDK 24
     * (JEP 491) it unmounts. The caller passes a per-request object that is
     * already shared with the HTTP server (the exchange): requests never contend
     * for it, and the JIT cannot elide the lock as it may for a local `new Object()`.
     */
    static void io(long ms, Object monitor) throws InterruptedException {
        if (monitor != null) {
            synchronized (monitor) {
                Thread.sleep(ms);
            }
        } else {
            Thread.sleep(ms);
        }
    }
}
