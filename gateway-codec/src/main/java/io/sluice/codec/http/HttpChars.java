package io.sluice.codec.http;

import java.nio.charset.StandardCharsets;

/**
 * Byte classes of RFC 9110/9112/3986 and the array scans the head parsers share. Everything works
 * on a head copied into a {@code byte[]} (plain array reads); nothing allocates unless it returns
 * a {@code String}.
 */
final class HttpChars {

    /** Token characters (methods, header names). */
    static final boolean[] TOKEN = new boolean[256];
    /** Bytes allowed in a field value: anything but controls other than HTAB (obs-text included). */
    static final boolean[] FIELD = new boolean[256];
    /** Bytes allowed in a request-target: visible ASCII (no controls, space or non-ASCII). */
    static final boolean[] TARGET = new boolean[256];
    /** RFC 3986 reg-name characters other than '%': unreserved and sub-delims. */
    static final boolean[] REG_NAME = new boolean[256];
    /** RFC 3986 unreserved characters: what a percent-encoding may be decoded to without changing meaning. */
    static final boolean[] UNRESERVED = new boolean[256];
    /** Hex digit values, -1 for anything else. */
    static final byte[] HEX = new byte[256];

    static {
        for (int c = 0; c < 256; c++) {
            boolean alnum = c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z';
            TOKEN[c] = alnum || c < 0x7f && "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
            FIELD[c] = (c >= 0x20 || c == 0x09) && c != 0x7f;
            TARGET[c] = c > 0x20 && c < 0x7f;
            UNRESERVED[c] = alnum || c < 0x7f && "-._~".indexOf(c) >= 0;
            REG_NAME[c] = UNRESERVED[c] || c < 0x7f && "!$&'()*+,;=".indexOf(c) >= 0;
            HEX[c] = (byte) (c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1);
        }
    }

    private HttpChars() {
    }

    static int indexOf(byte[] h, int from, int to, byte b) {
        for (int i = from; i < to; i++) {
            if (h[i] == b) {
                return i;
            }
        }
        return -1;
    }

    /** The first index in {@code [from, to)} whose byte is not allowed by {@code allowed}, or -1. */
    static int firstNot(byte[] h, int from, int to, boolean[] allowed) {
        for (int i = from; i < to; i++) {
            if (!allowed[h[i] & 0xff]) {
                return i;
            }
        }
        return -1;
    }

    static String text(byte[] h, int from, int to) {
        return new String(h, from, to - from, StandardCharsets.ISO_8859_1);
    }

    /** Like {@link #text} but at most 64 characters, control bytes shown as '?': for error reasons. */
    static String shown(byte[] h, int from, int to) {
        int end = Math.min(to, from + 64);
        char[] c = new char[end - from];
        for (int i = from; i < end; i++) {
            int b = h[i] & 0xff;
            c[i - from] = b < 0x20 || b == 0x7f ? '?' : (char) b;
        }
        return new String(c) + (end < to ? "..." : "");
    }

    static boolean isOws(byte b) {
        return b == ' ' || b == '\t';
    }

    /** The first index in {@code [from, to)} that is not optional whitespace, or {@code to}. */
    static int skipOws(byte[] h, int from, int to) {
        while (from < to && isOws(h[from])) {
            from++;
        }
        return from;
    }

    /** The end of {@code [from, to)} without its trailing optional whitespace. */
    static int trimOwsEnd(byte[] h, int from, int to) {
        while (to > from && isOws(h[to - 1])) {
            to--;
        }
        return to;
    }

    /** Compares ignoring ASCII case; {@code lower} is lower case. */
    static boolean equalsLower(byte[] h, int start, String lower) {
        for (int i = 0; i < lower.length(); i++) {
            if ((h[start + i] | 0x20) != lower.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    static boolean matches(byte[] h, int start, String s) {
        for (int i = 0; i < s.length(); i++) {
            if (h[start + i] != s.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether {@code [start, end)} is an RFC 3986 {@code host [ ":" port ]} as a Host header or an
     * absolute-form authority carries it: a reg-name (unreserved, sub-delims, percent-encodings), an
     * IPv4 address (a reg-name too) or an IPv6 literal in brackets, then optionally a colon and up to
     * five digits of a port at most 65535. No userinfo, spaces or controls. An empty value is allowed
     * (RFC 9110 §7.2: a Host for a target without authority).
     */
    static boolean isAuthority(byte[] h, int start, int end) {
        int hostEnd;
        int i = start;
        if (i < end && h[i] == '[') {
            int close = indexOf(h, i + 1, end, (byte) ']');
            if (close < 0 || close == i + 1) {
                return false;
            }
            for (int k = i + 1; k < close; k++) {
                byte b = h[k];
                if (!(HEX[b & 0xff] >= 0 || b == ':' || b == '.')) {
                    return false; // IPv6 (IPvFuture and zone identifiers are not accepted)
                }
            }
            hostEnd = close + 1;
            if (hostEnd < end && h[hostEnd] != ':') {
                return false;
            }
        } else {
            hostEnd = i;
            while (hostEnd < end && h[hostEnd] != ':') {
                byte b = h[hostEnd];
                if (b == '%') {
                    if (hostEnd + 2 >= end || HEX[h[hostEnd + 1] & 0xff] < 0 || HEX[h[hostEnd + 2] & 0xff] < 0) {
                        return false;
                    }
                    hostEnd += 3;
                    continue;
                }
                if (!REG_NAME[b & 0xff]) {
                    return false;
                }
                hostEnd++;
            }
        }
        if (hostEnd == end) {
            return true;
        }
        if (hostEnd == start) {
            return false; // a port without a host
        }
        // ":" port
        int digits = end - hostEnd - 1;
        if (digits > 5) {
            return false;
        }
        int port = 0;
        for (int k = hostEnd + 1; k < end; k++) {
            int d = h[k] - '0';
            if (d < 0 || d > 9) {
                return false;
            }
            port = port * 10 + d;
        }
        return port <= 65535;
    }
}
