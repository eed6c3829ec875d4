package loadlab;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;

/**
 * The root context's handler. HttpServer matches contexts by path prefix, so
 * this one handler sees every request and dispatches on the exact path; unknown
 * paths and wrong methods get the contract's JSON answers. It runs on the
 * request's own thread (platform or virtual, per THREAD_MODEL).
 */
final class Router implements HttpHandler {
    static final long IO_MS_MAX = 10_000;
    static final long CPU_N_MAX = 10_000_000;
    private static final String TEXT = "text/plain";
    private static final String JSON = "application/json";
    /** S1's 200-byte answer: "0123456789" twenty times. */
    private static final String PLAINTEXT_200 = "0123456789".repeat(20);
    private static final Set<String> ROUTES =
            Set.of("/plaintext", "/plaintext200", "/json", "/api/users", "/io", "/cpu", "/mixed", "/health");

    /** One response: status, media type, body. */
    private record Answer(int status, String contentType, String body) {
        static Answer json(String body) {
            return new Answer(200, JSON, body);
        }

        static Answer error(int status, String message) {
            return new Answer(status, JSON, Json.error(message));
        }
    }

    private final Settings settings;

    Router(Settings settings) {
        this.settings = settings;
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        try {
            URI uri = exchange.getRequestURI();
            String path = uri.getPath();
            if (path == null || !ROUTES.contains(path)) {
                send(exchange, Answer.error(404, "not found"));
                return;
            }
            String method = exchange.getRequestMethod();
            if (!method.equals("GET") && !method.equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET");
                send(exchange, Answer.error(405, "method not allowed"));
                return;
            }
            Answer answer;
            try {
                answer = route(path, new Query(uri.getRawQuery()), exchange);
            } catch (Query.BadParameter bad) {
                answer = Answer.error(400, bad.getMessage());
            }
            send(exchange, answer);
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new IOException(interrupted);
        } catch (RuntimeException bug) {
            bug.printStackTrace();
            if (exchange.getResponseCode() == -1) { // headers not sent yet
                send(exchange, Answer.error(500, "internal error"));
            }
        } finally {
            exchange.close();
        }
    }

    private Answer route(String path, Query query, HttpExchange exchange)
            throws Query.BadParameter, InterruptedException {
        return switch (path) {
            case "/plaintext" -> new Answer(200, TEXT, "Hello, World!");
            case "/plaintext200" -> new Answer(200, TEXT, PLAINTEXT_200);
            case "/json" -> {
                StringBuilder out = new StringBuilder(32).append('{');
                yield Answer.json(Json.string(Json.key(out, "message"), "Hello, World!").append('}').toString());
            }
            case "/api/users" -> Answer.json(User.listJson(User.ALL));
            case "/io" -> {
                long ms = query.integer("ms", IO_MS_MAX);
                Work.io(ms, settings.pinOnIo() ? exchange : null);
                StringBuilder out = new StringBuilder(24).append('{');
                yield Answer.json(Json.key(out, "io_ms").append(ms).append('}').toString());
            }
            case "/cpu" -> {
                long n = query.integer("n", CPU_N_MAX);
                yield Answer.json(cpuJson(n, Work.cpuHash(n)).append('}').toString());
            }
            case "/mixed" -> {
                long n = query.integer("cpu", CPU_N_MAX);
                long ms = query.integer("io", IO_MS_MAX);
                long hash = Work.cpuHash(n);
                Work.io(ms, settings.pinOnIo() ? exchange : null);
                yield Answer.json(Json.key(cpuJson(n, hash).append(','), "io_ms").append(ms).append('}').toString());
            }
            case "/health" -> Answer.json(health());
            default -> throw new IllegalStateException("no handler for " + path);
        };
    }

    /** `{"n":N,"hash":"H"` without the closing brace. */
    private static StringBuilder cpuJson(long n, long hash) {
        StringBuilder out = new StringBuilder(64).append('{');
        Json.key(out, "n").append(n).append(',');
        return Json.key(out, "hash").append('"').append(Long.toUnsignedString(hash)).append('"');
    }

    private String health() {
        StringBuilder out = new StringBuilder(512).append('{');
        Json.string(Json.key(out, "server"), Server.NAME).append(',');
        Json.string(Json.key(out, "runtime"), "java").append(',');
        Json.string(Json.key(out, "runtime_version"), Runtime.version().toString()).append(',');
        Json.string(Json.key(out, "model"), settings.model()).append(',');
        Json.key(out, "settings").append('{');
        Json.string(Json.key(out, "THREAD_MODEL"), settings.threadModel()).append(',');
        Json.string(Json.key(out, "PIN_ON_IO"), Boolean.toString(settings.pinOnIo())).append(',');
        Json.string(Json.key(out, "JAVA_OPTS"), settings.javaOpts()).append(',');
        Json.string(Json.key(out, "HOST"), settings.host()).append(',');
        Json.string(Json.key(out, "PORT"), Integer.toString(settings.port())).append("},");
        Json.key(out, "contract").append(1).append(',');
        Json.string(Json.key(out, "vm"), System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version")).append(',');
        Json.key(out, "available_processors").append(Runtime.getRuntime().availableProcessors()).append(',');
        Json.key(out, "max_heap_bytes").append(Runtime.getRuntime().maxMemory()).append(',');
        Json.key(out, "garbage_collectors");
        stringArray(out, ManagementFactory.getGarbageCollectorMXBeans().stream().map(GarbageCollectorMXBean::getName).toList());
        out.append(',');
        Json.key(out, "jvm_args");
        stringArray(out, ManagementFactory.getRuntimeMXBean().getInputArguments());
        return out.append('}').toString();
    }

    private static void stringArray(StringBuilder out, List<String> values) {
        out.append('[');
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            Json.string(out, values.get(i));
        }
        out.append(']');
    }

    /**
     * Writes the answer with Server, Content-Type and an exact Content-Length
     * (HttpServer adds Date itself, on every response). HEAD gets the same
     * headers and no body: HttpServer wants -1 there and the length set by hand.
     */
    private static void send(HttpExchange exchange, Answer answer) throws IOException {
        byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
        Headers headers = exchange.getResponseHeaders();
        headers.set("Server", Server.NAME);
        headers.set("Content-Type", answer.contentType());
        // HttpServer closes a connection whose request asked it to, but does not say so; a client (wrk) that is
        // not told then tries the closed connection again and counts a read error for every request.
        String connection = exchange.getRequestHeaders().getFirst("Connection");
        if (connection != null && connection.trim().equalsIgnoreCase("close")) {
            headers.set("Connection", "close");
        }
        if (body.length == 0 || exchange.getRequestMethod().equals("HEAD")) {
            headers.set("Content-Length", Integer.toString(body.length));
            exchange.sendResponseHeaders(answer.status(), -1);
            return;
        }
        exchange.sendResponseHeaders(answer.status(), body.length); // > 0: a fixed length, never chunked
        exchange.getResponseBody().write(body);
    }
}
