package io.sluice.server.http.rules;

import java.util.random.RandomGenerator;

/**
 * Request ids: a random UUID (version 4 layout) from the event loop's own random source
 * ({@code ThreadLocalRandom}: no lock, no {@code SecureRandom}); and what counts as a usable
 * id sent by a client.
 */
public final class RequestIds {

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private RequestIds() {
    }

    /** A new id such as {@code 3f2b8c1e-5d4a-4e6f-9a1b-0c2d3e4f5a6b}. */
    public static String next(RandomGenerator rnd) {
        long hi = rnd.nextLong() & 0xffffffffffff0fffL | 0x0000000000004000L; // version 4
        long lo = rnd.nextLong() & 0x3fffffffffffffffL | 0x8000000000000000L; // IETF variant
        char[] c = new char[36];
        int p = 0;
        for (int i = 15; i >= 0; i--) {
            if (p == 8 || p == 13) {
                c[p++] = '-';
            }
            c[p++] = HEX[(int) (hi >>> (i * 4)) & 0xf];
        }
        for (int i = 15; i >= 0; i--) {
            if (p == 18 || p == 23) {
                c[p++] = '-';
            }
            c[p++] = HEX[(int) (lo >>> (i * 4)) & 0xf];
        }
        return new String(c);
    }

    /** A client-sent id worth keeping: 1..128 visible ASCII characters. */
    public static boolean usable(String id) {
        if (id == null || id.isEmpty() || id.length() > 128) {
            return false;
        }
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (c <= 0x20 || c >= 0x7f) {
                return false;
            }
        }
        return true;
    }
}
