package loadlab;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/**
 * The contract's integer parameters, parsed from the raw query string: pairs
 * split on '&', names and values URL-decoded ('+' is a space), the first
 * occurrence of a name counts.
 */
final class Query {
    /** A parameter the contract rejects; the message is the contract's. */
    static final class BadParameter extends Exception {
        private static final long serialVersionUID = 1L;

        BadParameter(String message) {
            super(message, null, false, false); // no stack trace: this is an answer, not a bug
        }
    }

    private final String raw;

    Query(String rawQuery) {
        this.raw = rawQuery == null ? "" : rawQuery;
    }

    /** The decoded value of the first `name=` pair, or null when there is none. */
    String first(String name) {
        int length = raw.length();
        int start = 0;
        while (start < length) {
            // One pass over the pair: find its '=' (if any) and its end.
            int equals = -1;
            int end = start;
            for (; end < length; end++) {
                char c = raw.charAt(end);
                if (c == '&') {
                    break;
                }
                if (c == '=' && equals < 0) {
                    equals = end;
                }
            }
            int keyEnd = equals < 0 ? end : equals;
            if (end > start && decode(raw.substring(start, keyEnd)).equals(name)) {
                return keyEnd == end ? "" : decode(raw.substring(keyEnd + 1, end));
            }
            start = end + 1;
        }
        return null;
    }

    /**
     * An integer parameter: required, then all ASCII digits, then at most `max`
     * (checked on the digits themselves, so no length of input can overflow).
     */
    long integer(String name, long max) throws BadParameter {
        String value = first(name);
        if (value == null || value.isEmpty()) {
            throw new BadParameter("parameter " + name + " is required");
        }
        int firstSignificant = -1;
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < '0' || c > '9') {
                throw new BadParameter("parameter " + name + " must be a non-negative integer");
            }
            if (firstSignificant < 0 && c != '0') {
                firstSignificant = i;
            }
        }
        if (firstSignificant < 0) {
            return 0;
        }
        // 18 digits always fit in a long; any longer number is above every bound here.
        if (value.length() - firstSignificant > 18) {
            throw new BadParameter(tooBig(name, max));
        }
        long parsed = Long.parseLong(value, firstSignificant, value.length(), 10);
        if (parsed > max) {
            throw new BadParameter(tooBig(name, max));
        }
        return parsed;
    }

    private static String tooBig(String name, long max) {
        return "parameter " + name + " must be at most " + max;
    }

    private static String decode(String text) {
        if (text.indexOf('%') < 0 && text.indexOf('+') < 0) {
            return text;
        }
        try {
            return URLDecoder.decode(text, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException malformedEscape) {
            return text; // left as sent: '%' is not a digit, so the value is rejected
        }
    }
}
