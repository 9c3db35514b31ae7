package io.sluice.lb;

import java.nio.charset.StandardCharsets;

/**
 * The 64-bit hashes of hash balancing: request keys and ring points. FNV-1a over the UTF-8 bytes
 * followed by the MurmurHash3 finalizer, which spreads every input bit over the whole word (plain
 * FNV-1a of short similar strings such as {@code "user-1"}, {@code "user-2"} clusters badly on a
 * ring). Stable across JVMs and releases: keys keep their host after a restart.
 */
public final class Hashing {

    private static final long FNV_OFFSET = 0xcbf29ce484222325L;
    private static final long FNV_PRIME = 0x100000001b3L;

    private Hashing() {
    }

    /** The hash of {@code s} (never {@link #NO_KEY}). */
    public static long hash(CharSequence s) {
        long h = FNV_OFFSET;
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                h = (h ^ c) * FNV_PRIME;
            } else {
                for (byte b : String.valueOf(c).getBytes(StandardCharsets.UTF_8)) {
                    h = (h ^ (b & 0xff)) * FNV_PRIME;
                }
            }
        }
        long m = mix(h);
        return m == NO_KEY ? 1 : m;
    }

    /** "No hash key": the request is balanced as if the cluster had no hash policy. */
    public static final long NO_KEY = 0;

    /** MurmurHash3's 64-bit finalizer. */
    public static long mix(long k) {
        k ^= k >>> 33;
        k *= 0xff51afd7ed558ccdL;
        k ^= k >>> 33;
        k *= 0xc4ceb9fe1a85ec53L;
        k ^= k >>> 33;
        return k;
    }
}
