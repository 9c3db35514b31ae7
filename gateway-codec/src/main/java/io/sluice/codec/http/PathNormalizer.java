package io.sluice.codec.http;

import java.nio.charset.StandardCharsets;

/**
 * The path a request is routed on and forwarded with: RFC 3986 normalization of the path of a
 * request-target, so that a route matching {@code /pub/} sees {@code /private.txt} for
 * {@code /pub/../private.txt} or {@code /pub/%2e%2e/private.txt}, exactly as an upstream that
 * normalizes would.
 * <ol>
 *   <li>percent-encoded unreserved characters ({@code ALPHA DIGIT - . _ ~}) are decoded, other
 *       percent-encodings kept with upper-case hex (RFC 3986 §6.2.2); a {@code %} not followed by two
 *       hex digits is rejected;</li>
 *   <li>{@code %2F} and {@code %5C} (any case), which some upstreams decode into path separators, are
 *       handled by {@link EscapedSlashes};</li>
 *   <li>a raw backslash is rejected (some servers treat it as a separator);</li>
 *   <li>runs of {@code /} are merged into one when asked to;</li>
 *   <li>dot segments are removed (RFC 3986 §5.2.4); {@code ..} never climbs above the root.</li>
 * </ol>
 * {@link #check} looks at the bytes without allocating and says whether anything would change: an
 * ordinary path ({@code /api/v1/items/42}, {@code /index.html}) costs one scan and no allocation.
 */
public final class PathNormalizer {

    /** What to do with {@code %2F} and {@code %5C} in a path. */
    public enum EscapedSlashes {
        /** Answer 400: the safe default (no reading of the path is ambiguous). */
        REJECT,
        /** Keep them encoded (upper-case hex), as opaque characters of their segment. */
        KEEP,
        /** Decode both to {@code /} before dot segments are removed (and slashes merged). */
        DECODE
    }

    /** {@link #check}: the path is already normal. */
    static final int NORMAL = 0;
    /** {@link #check}: {@link #normalize} gives a different path. */
    static final int CHANGES = 1;
    static final int BAD_ESCAPE = -1;
    static final int ESCAPED_SLASH = -2;
    static final int BACKSLASH = -3;

    private PathNormalizer() {
    }

    /**
     * Scans the path {@code [start, end)} (starting with {@code /}): {@link #NORMAL},
     * {@link #CHANGES}, or a negative reason to reject it ({@link #reason}). No allocation.
     */
    static int check(byte[] h, int start, int end, EscapedSlashes escaped, boolean mergeSlashes) {
        int result = NORMAL;
        for (int i = start; i < end; i++) {
            byte b = h[i];
            if (b == '/') {
                int next = i + 1;
                if (next < end && h[next] == '/' && mergeSlashes) {
                    result = CHANGES;
                } else if (next < end && h[next] == '.') {
                    // a dot segment: "/." or "/.." followed by "/" or the end
                    int k = next + 1;
                    if (k < end && h[k] == '.') {
                        k++;
                    }
                    if (k == end || h[k] == '/') {
                        result = CHANGES;
                    }
                }
            } else if (b == '%') {
                if (i + 2 >= end) {
                    return BAD_ESCAPE;
                }
                int hi = HttpChars.HEX[h[i + 1] & 0xff];
                int lo = HttpChars.HEX[h[i + 2] & 0xff];
                if (hi < 0 || lo < 0) {
                    return BAD_ESCAPE;
                }
                int v = hi << 4 | lo;
                if (v == '/' || v == '\\') {
                    if (escaped == EscapedSlashes.REJECT) {
                        return ESCAPED_SLASH;
                    }
                    if (escaped == EscapedSlashes.DECODE) {
                        result = CHANGES;
                    }
                } else if (HttpChars.UNRESERVED[v]) {
                    result = CHANGES;
                }
                if (h[i + 1] >= 'a' || h[i + 2] >= 'a') {
                    result = CHANGES; // lower-case hex becomes upper case
                }
                i += 2;
            } else if (b == '\\') {
                return BACKSLASH;
            }
        }
        return result;
    }

    /** Why {@link #check} rejected a path. */
    static String reason(int code) {
        return switch (code) {
            case BAD_ESCAPE -> "malformed percent-encoding in path";
            case ESCAPED_SLASH -> "encoded slash or backslash (%2F, %5C) in path";
            case BACKSLASH -> "backslash in path";
            default -> "malformed path";
        };
    }

    /** The normalized form of a path {@link #check} accepted (allocates: call it only for {@link #CHANGES}). */
    static String normalize(byte[] h, int start, int end, EscapedSlashes escaped, boolean mergeSlashes) {
        // 1. decode what may be decoded
        char[] d = new char[end - start];
        int n = 0;
        for (int i = start; i < end; i++) {
            byte b = h[i];
            if (b == '%') {
                int v = HttpChars.HEX[h[i + 1] & 0xff] << 4 | HttpChars.HEX[h[i + 2] & 0xff];
                if ((v == '/' || v == '\\') && escaped == EscapedSlashes.DECODE) {
                    d[n++] = '/';
                } else if (HttpChars.UNRESERVED[v]) {
                    d[n++] = (char) v;
                } else {
                    d[n++] = '%';
                    d[n++] = Character.toUpperCase((char) h[i + 1]);
                    d[n++] = Character.toUpperCase((char) h[i + 2]);
                }
                i += 2;
            } else if (b == '/' && mergeSlashes && n > 0 && d[n - 1] == '/') {
                continue;
            } else {
                d[n++] = (char) (b & 0xff);
            }
        }
        if (mergeSlashes) {
            n = merge(d, n); // decoded %2F may have made new runs
        }
        // 2. RFC 3986 §5.2.4 remove_dot_segments, input d[0, n) starting with '/'
        char[] out = new char[n + 1];
        int op = 0;
        int ip = 0;
        while (ip < n) {
            if (startsWith(d, ip, n, "/./")) {
                ip += 2;
            } else if (rest(d, ip, n, "/.")) {
                out[op++] = '/';
                ip = n;
            } else if (startsWith(d, ip, n, "/../")) {
                ip += 3;
                op = lastSlash(out, op);
            } else if (rest(d, ip, n, "/..")) {
                ip = n;
                op = lastSlash(out, op);
                out[op++] = '/';
            } else if (rest(d, ip, n, ".") || rest(d, ip, n, "..")) {
                ip = n;
            } else if (startsWith(d, ip, n, "../")) {
                ip += 3;
            } else if (startsWith(d, ip, n, "./")) {
                ip += 2;
            } else {
                out[op++] = d[ip++];
                while (ip < n && d[ip] != '/') {
                    out[op++] = d[ip++];
                }
            }
        }
        return op == 0 ? "/" : new String(out, 0, op);
    }

    /**
     * The normalized form of {@code path} (which must start with {@code /}), the same instance when
     * it is already normal.
     *
     * @throws IllegalArgumentException when the path is rejected (the message says why)
     */
    public static String normalize(String path, EscapedSlashes escaped, boolean mergeSlashes) {
        byte[] h = path.getBytes(StandardCharsets.ISO_8859_1);
        int c = check(h, 0, h.length, escaped, mergeSlashes);
        if (c < 0) {
            throw new IllegalArgumentException(reason(c));
        }
        return c == NORMAL ? path : normalize(h, 0, h.length, escaped, mergeSlashes);
    }

    private static int merge(char[] d, int n) {
        int w = 0;
        for (int r = 0; r < n; r++) {
            if (d[r] == '/' && w > 0 && d[w - 1] == '/') {
                continue;
            }
            d[w++] = d[r];
        }
        return w;
    }

    private static int lastSlash(char[] out, int op) {
        for (int i = op - 1; i >= 0; i--) {
            if (out[i] == '/') {
                return i;
            }
        }
        return 0;
    }

    private static boolean startsWith(char[] d, int at, int n, String s) {
        if (n - at < s.length()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            if (d[at + i] != s.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static boolean rest(char[] d, int at, int n, String s) {
        return n - at == s.length() && startsWith(d, at, n, s);
    }
}
