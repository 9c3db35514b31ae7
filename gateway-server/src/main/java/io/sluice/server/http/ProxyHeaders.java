package io.sluice.server.http;

import java.util.Iterator;
import java.util.Map;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AsciiString;

import java.util.List;

/** Header rewriting for a proxied hop: hop-by-hop removal and X-Forwarded-*. */
final class ProxyHeaders {

    private static final AsciiString PROXY_CONNECTION = AsciiString.cached("proxy-connection");
    private static final AsciiString X_FORWARDED_FOR = AsciiString.cached("x-forwarded-for");
    private static final AsciiString X_FORWARDED_PROTO = AsciiString.cached("x-forwarded-proto");
    private static final AsciiString X_FORWARDED_HOST = AsciiString.cached("x-forwarded-host");
    private static final AsciiString HTTP = AsciiString.cached("http");

    private ProxyHeaders() {
    }

    /**
     * Removes the hop-by-hop headers of RFC 9110 §7.6.1 and every header named in {@code Connection}.
     * {@code Transfer-Encoding} stays: the body is streamed with the same framing.
     */
    static void stripHopByHop(HttpHeaders h) {
        if (!hasHopByHop(h)) {
            return; // the common case: one pass over the names, no hash lookups, no removals
        }
        if (h.contains(HttpHeaderNames.CONNECTION)) {
            List<String> named = h.getAll(HttpHeaderNames.CONNECTION);
            for (String value : named) {
                int start = 0;
                while (start < value.length()) {
                    int comma = value.indexOf(',', start);
                    int end = comma < 0 ? value.length() : comma;
                    String token = value.substring(start, end).trim();
                    if (!token.isEmpty() && !token.equalsIgnoreCase("close") && !token.equalsIgnoreCase("keep-alive")
                            && !token.equalsIgnoreCase(HttpHeaderNames.TRANSFER_ENCODING.toString())) {
                        h.remove(token);
                    }
                    start = end + 1;
                }
            }
            h.remove(HttpHeaderNames.CONNECTION);
        }
        h.remove(HttpHeaderNames.KEEP_ALIVE);
        h.remove(PROXY_CONNECTION);
        h.remove(HttpHeaderNames.TE);
        h.remove(HttpHeaderNames.TRAILER);
        h.remove(HttpHeaderNames.UPGRADE);
        h.remove(HttpHeaderNames.PROXY_AUTHORIZATION);
        h.remove(HttpHeaderNames.PROXY_AUTHENTICATE);
    }

    /** True if any header name is (possibly) hop-by-hop: a cheap length-and-first-letter filter, then an exact check. */
    static boolean hasHopByHop(HttpHeaders h) {
        for (Iterator<Map.Entry<CharSequence, CharSequence>> it = h.iteratorCharSequence(); it.hasNext(); ) {
            CharSequence n = it.next().getKey();
            int len = n.length();
            if (len != 2 && len != 7 && len != 10 && len != 16 && len != 18 && len != 19) {
                continue;
            }
            char c = (char) (n.charAt(0) | 0x20);
            if ((c == 'c' || c == 'k' || c == 'p' || c == 't' || c == 'u') && isHopByHop(n)) {
                return true;
            }
        }
        return false;
    }

    private static boolean isHopByHop(CharSequence n) {
        return AsciiString.contentEqualsIgnoreCase(n, HttpHeaderNames.CONNECTION)
                || AsciiString.contentEqualsIgnoreCase(n, HttpHeaderNames.KEEP_ALIVE)
                || AsciiString.contentEqualsIgnoreCase(n, PROXY_CONNECTION)
                || AsciiString.contentEqualsIgnoreCase(n, HttpHeaderNames.TE)
                || AsciiString.contentEqualsIgnoreCase(n, HttpHeaderNames.TRAILER)
                || AsciiString.contentEqualsIgnoreCase(n, HttpHeaderNames.UPGRADE)
                || AsciiString.contentEqualsIgnoreCase(n, HttpHeaderNames.PROXY_AUTHORIZATION)
                || AsciiString.contentEqualsIgnoreCase(n, HttpHeaderNames.PROXY_AUTHENTICATE);
    }

    /** Appends the client address to X-Forwarded-For; sets X-Forwarded-Proto and -Host when absent. */
    static void addForwarded(HttpHeaders h, String clientIp, String originalHost) {
        String xff = h.get(X_FORWARDED_FOR);
        h.set(X_FORWARDED_FOR, xff == null || xff.isEmpty() ? clientIp : xff + ", " + clientIp);
        if (!h.contains(X_FORWARDED_PROTO)) {
            h.set(X_FORWARDED_PROTO, HTTP);
        }
        if (originalHost != null && !h.contains(X_FORWARDED_HOST)) {
            h.set(X_FORWARDED_HOST, originalHost);
        }
    }

    /** The Host header's name part, lower case, without port (IPv6 brackets kept). */
    static String hostWithoutPort(String host) {
        if (host == null) {
            return null;
        }
        int end = host.length();
        if (host.startsWith("[")) {
            int close = host.indexOf(']');
            end = close < 0 ? end : close + 1;
        } else {
            int colon = host.lastIndexOf(':');
            if (colon >= 0) {
                end = colon;
            }
        }
        return host.substring(0, end).toLowerCase(java.util.Locale.ROOT);
    }

    /** The path of a request-target, without query or fragment. */
    static String pathOf(String uri) {
        int q = uri.indexOf('?');
        int f = uri.indexOf('#');
        int end = q < 0 ? (f < 0 ? uri.length() : f) : (f < 0 ? q : Math.min(q, f));
        if (uri.startsWith("http://") || uri.startsWith("https://")) {
            int slash = uri.indexOf('/', uri.indexOf("//") + 2);
            return slash < 0 || slash >= end ? "/" : uri.substring(slash, end);
        }
        return uri.substring(0, end);
    }
}
