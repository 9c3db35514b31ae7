package io.sluice.core.config;

import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Header rules of one direction (request to the upstream, or response to the client), applied in
 * the order remove → set → add. Values may contain variables, replaced per request:
 * {@code %DOWNSTREAM_REMOTE_ADDRESS%} (the client's IP), {@code %REQUEST_ID%}, {@code %ROUTE_NAME%},
 * {@code %UPSTREAM_HOST%} (the picked host's address), {@code %TRACE_ID%}; {@code %%} is a literal
 * {@code %}. Hop-by-hop, framing and Host headers cannot be named (Host has {@code host_rewrite}).
 *
 * @param add    headers appended (a client's copy is kept)
 * @param set    headers written, replacing every received copy (a client cannot supply them)
 * @param remove header names removed
 */
public record HeaderRules(List<Header> add, List<Header> set, List<String> remove) {

    /** The variables a value may use. */
    public static final Set<String> VARIABLES = Set.of("DOWNSTREAM_REMOTE_ADDRESS", "REQUEST_ID", "ROUTE_NAME",
            "UPSTREAM_HOST", "TRACE_ID");
    private static final Set<String> RESERVED = Set.of("host", "connection", "keep-alive", "proxy-connection",
            "transfer-encoding", "content-length", "te", "trailer", "upgrade", "proxy-authenticate",
            "proxy-authorization");

    public HeaderRules {
        add = Checks.list(add);
        set = Checks.list(set);
        remove = Checks.list(remove);
        for (int i = 0; i < add.size(); i++) {
            checkName("add[" + i + "].name", add.get(i).name());
        }
        for (int i = 0; i < set.size(); i++) {
            checkName("set[" + i + "].name", set.get(i).name());
        }
        for (int i = 0; i < remove.size(); i++) {
            checkName("remove[" + i + "]", remove.get(i));
        }
    }

    public boolean isEmpty() {
        return add.isEmpty() && set.isEmpty() && remove.isEmpty();
    }

    /** One header: its value is checked and its variables parsed when the config loads. */
    public record Header(String name, String value) {
        public Header {
            if (name == null || !isToken(name)) {
                throw new ConfigException("name", name, "a header name (an HTTP token)");
            }
            if (value == null || !isValue(value)) {
                throw new ConfigException("value", value, "a header value without control characters");
            }
            parts(value); // validates the variables
        }
    }

    private static void checkName(String path, String name) {
        if (name == null || !isToken(name)) {
            throw new ConfigException(path, name, "a header name (an HTTP token)");
        }
        if (RESERVED.contains(name.toLowerCase(Locale.ROOT)) || name.startsWith(":")) {
            throw new ConfigException(path, name, "a header other than Host, hop-by-hop and framing headers");
        }
    }

    /**
     * Splits {@code value} into literal text and variables: every even element is literal text,
     * every odd one a variable name from {@link #VARIABLES}.
     */
    public static List<String> parts(String value) {
        java.util.ArrayList<String> out = new java.util.ArrayList<>();
        StringBuilder lit = new StringBuilder();
        int i = 0;
        while (i < value.length()) {
            char c = value.charAt(i);
            if (c != '%') {
                lit.append(c);
                i++;
                continue;
            }
            if (i + 1 < value.length() && value.charAt(i + 1) == '%') {
                lit.append('%');
                i += 2;
                continue;
            }
            int end = value.indexOf('%', i + 1);
            String var = end < 0 ? null : value.substring(i + 1, end);
            if (var == null || !VARIABLES.contains(var)) {
                throw new ConfigException("value", value, "literal text and variables among " + new java.util.TreeSet<>(VARIABLES)
                        + " written as %NAME% (%% for a %)");
            }
            out.add(lit.toString());
            lit.setLength(0);
            out.add(var);
            i = end + 1;
        }
        out.add(lit.toString());
        return out;
    }

    /** An HTTP token (RFC 9110 §5.6.2). */
    public static boolean isToken(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
                    || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** Visible ASCII and spaces/tabs only (no CR, LF or other controls, nothing a head cannot carry). */
    public static boolean isValue(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\t' && (c < 0x20 || c > 0x7e)) {
                return false;
            }
        }
        return true;
    }
}
