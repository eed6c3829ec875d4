package loadlab;

/** The little JSON the contract needs, written into a StringBuilder per request. */
final class Json {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private Json() {}

    /** Appends `value` as a JSON string (quotes, backslashes and control characters escaped). */
    static StringBuilder string(StringBuilder out, String value) {
        out.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xf]);
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"');
    }

    /** Appends `"name":` (names are trusted constants). */
    static StringBuilder key(StringBuilder out, String name) {
        return out.append('"').append(name).append("\":");
    }

    /** {"error":"message"} */
    static String error(String message) {
        StringBuilder out = new StringBuilder(64).append('{');
        key(out, "error");
        return string(out, message).append('}').toString();
    }
}
