package loadlab;

/** The environment the server reads, with defaults applied and values checked. */
record Settings(String host, int port, String threadModel, boolean pinOnIo, String javaOpts) {

    static Settings fromEnvironment() {
        String host = env("HOST", "0.0.0.0");
        String portText = env("PORT", "8080");
        int port;
        try {
            port = Integer.parseInt(portText);
        } catch (NumberFormatException error) {
            port = -1;
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("PORT must be an integer from 0 to 65535, not '" + portText + "'");
        }
        String threadModel = env("THREAD_MODEL", "platform");
        if (!threadModel.equals("platform") && !threadModel.equals("virtual")) {
            throw new IllegalArgumentException("THREAD_MODEL must be 'platform' or 'virtual', not '" + threadModel + "'");
        }
        String pin = env("PIN_ON_IO", "false");
        if (!pin.equals("true") && !pin.equals("false")) {
            throw new IllegalArgumentException("PIN_ON_IO must be 'true' or 'false', not '" + pin + "'");
        }
        // JAVA_OPTS is read by the entrypoint script; reported here as given.
        String javaOpts = System.getenv("JAVA_OPTS");
        return new Settings(host, port, threadModel, pin.equals("true"), javaOpts == null ? "" : javaOpts);
    }

    String model() {
        return threadModel.equals("virtual") ? "virtual-thread-per-request" : "platform-thread-per-request";
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isEmpty() ? fallback : value;
    }
}
