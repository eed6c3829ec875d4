package loadlab;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * java-threads serves the loadlab contract (servers/CONTRACT.md) with the JDK's
 * built-in com.sun.net.httpserver.HttpServer. Its dispatcher thread accepts
 * connections and waits for requests with a selector; each request is handed to
 * the executor, and the executor is the only thing THREAD_MODEL changes:
 *
 *   platform  a new platform (OS) thread per request
 *   virtual   a new virtual thread per request
 *
 * Standard library only.
 */
public final class Server {
    static final String NAME = "java-threads";

    /** Listen backlog; the kernel caps it at net.core.somaxconn. */
    private static final int BACKLOG = 4096;

    private Server() {}

    public static void main(String[] args) throws IOException {
        Settings settings;
        try {
            settings = Settings.fromEnvironment();
        } catch (IllegalArgumentException error) {
            System.err.println(NAME + ": " + error.getMessage());
            System.exit(2);
            return;
        }

        HttpServer server = HttpServer.create(new InetSocketAddress(settings.host(), settings.port()), BACKLOG);
        // HttpServer contexts match by prefix: one root context, exact paths in Router.
        server.createContext("/", new Router(settings));
        server.setExecutor(executorFor(settings.threadModel()));
        server.start();
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(() -> server.stop(0)));

        System.out.printf("%s %s listening on %s:%d (THREAD_MODEL=%s, PIN_ON_IO=%s, processors=%d, max heap=%d MiB)%n",
                NAME, Runtime.version(), settings.host(), settings.port(), settings.threadModel(),
                settings.pinOnIo(), Runtime.getRuntime().availableProcessors(),
                Runtime.getRuntime().maxMemory() >> 20);
    }

    /** The one difference between the two models. */
    static ExecutorService executorFor(String threadModel) {
        return switch (threadModel) {
            case "platform" -> Executors.newThreadPerTaskExecutor(Thread.ofPlatform().name("request-", 0).factory());
            case "virtual" -> Executors.newVirtualThreadPerTaskExecutor();
            default -> throw new IllegalArgumentException("THREAD_MODEL " + threadModel);
        };
    }
}
