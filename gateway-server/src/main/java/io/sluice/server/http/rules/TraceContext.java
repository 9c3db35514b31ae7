package io.sluice.server.http.rules;

import java.util.random.RandomGenerator;

/**
 * W3C Trace Context {@code traceparent} ({@code version-traceid-parentid-flags}, e.g.
 * {@code 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01}): continued with the same trace id
 * and flags and a new parent (span) id for the gateway's hop, or started when missing or malformed.
 * The parser never throws: anything it does not recognise is treated as absent.
 */
public final class TraceContext {

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private TraceContext() {
    }

    /** Whether {@code v} is a traceparent this gateway continues (version 00, or a later one in its 00 layout). */
    public static boolean valid(CharSequence v) {
        if (v == null || v.length() < 55) {
            return false;
        }
        if (!hex(v, 0, 2) || v.charAt(2) != '-' || v.charAt(35) != '-' || v.charAt(52) != '-') {
            return false;
        }
        boolean v00 = v.charAt(0) == '0' && v.charAt(1) == '0';
        if (v.charAt(0) == 'f' && v.charAt(1) == 'f') {
            return false; // version ff is invalid
        }
        if (v00 ? v.length() != 55 : v.length() > 55 && v.charAt(55) != '-') {
            return false;
        }
        return hex(v, 3, 35) && !zeros(v, 3, 35) && hex(v, 36, 52) && !zeros(v, 36, 52) && hex(v, 53, 55);
    }

    /**
     * The traceparent to send upstream: {@code incoming} continued (its trace id and sampled flag, a
     * new span id) if valid, else a new sampled trace.
     */
    public static String next(CharSequence incoming, RandomGenerator rnd) {
        char[] out = new char[55];
        out[0] = '0';
        out[1] = '0';
        out[2] = '-';
        out[35] = '-';
        out[52] = '-';
        if (valid(incoming)) {
            for (int i = 3; i < 35; i++) {
                out[i] = incoming.charAt(i);
            }
            int flags = Character.digit(incoming.charAt(54), 16) & 1; // version 00 knows only "sampled"
            out[53] = '0';
            out[54] = HEX[flags];
        } else {
            long hi;
            long lo;
            do {
                hi = rnd.nextLong();
                lo = rnd.nextLong();
            } while (hi == 0 && lo == 0);
            hexInto(out, 3, hi);
            hexInto(out, 19, lo);
            out[53] = '0';
            out[54] = '1';
        }
        long span;
        do {
            span = rnd.nextLong();
        } while (span == 0);
        hexInto(out, 36, span);
        return new String(out);
    }

    /** The trace id of a valid traceparent (as {@link #next} returns). */
    public static String traceId(String traceparent) {
        return traceparent.substring(3, 35);
    }

    static void hexInto(char[] out, int at, long v) {
        for (int i = 15; i >= 0; i--) {
            out[at + i] = HEX[(int) (v & 0xf)];
            v >>>= 4;
        }
    }

    private static boolean hex(CharSequence v, int from, int to) {
        for (int i = from; i < to; i++) {
            char c = v.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                return false;
            }
        }
        return true;
    }

    private static boolean zeros(CharSequence v, int from, int to) {
        for (int i = from; i < to; i++) {
            if (v.charAt(i) != '0') {
                return false;
            }
        }
        return true;
    }
}
