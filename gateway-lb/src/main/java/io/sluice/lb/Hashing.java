package io.sluice.lb;

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

    /** The hash of {@code s}'s UTF-8 bytes (never {@link #NO_KEY}); allocation-free. */
    public static long hash(CharSequence s) {
        long h = FNV_OFFSET;
        int n = s.length();
        for (int i = 0; i < n; i++) {
            int c = s.charAt(i);
            if (c < 0x80) {
                h = (h ^ c) * FNV_PRIME;
                continue;
            }
            if (Character.isHighSurrogate((char) c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                c = Character.toCodePoint((char) c, s.charAt(++i));
            } else if (Character.isSurrogate((char) c)) {
                c = '?'; // a lone surrogate, as String.getBytes(UTF_8) encodes it
            }
            if (c < 0x80) {
                h = (h ^ c) * FNV_PRIME;
            } else if (c < 0x800) {
                h = (h ^ (0xC0 | c >> 6)) * FNV_PRIME;
                h = (h ^ (0x80 | c & 0x3F)) * FNV_PRIME;
            } else if (c < 0x10000) {
                h = (h ^ (0xE0 | c >> 12)) * FNV_PRIME;
                h = (h ^ (0x80 | c >> 6 & 0x3F)) * FNV_PRIME;
                h = (h ^ (0x80 | c & 0x3F)) * FNV_PRIME;
            } else {
                h = (h ^ (0xF0 | c >> 18)) * FNV_PRIME;
                h = (h ^ (0x80 | c >> 12 & 0x3F)) * FNV_PRIME;
                h = (h ^ (0x80 | c >> 6 & 0x3F)) * FNV_PRIME;
                h = (h ^ (0x80 | c & 0x3F)) * FNV_PRIME;
            }
        }
        long m = mix(h);
        return m == NO_KEY ? 1 : m;
    }

    /** The same hash over raw bytes (for tests: {@code hash(s) == hashBytes(s.getBytes(UTF_8))}). */
    static long hashBytes(byte[] bytes) {
        long h = FNV_OFFSET;
        for (byte b : bytes) {
            h = (h ^ (b & 0xff)) * FNV_PRIME;
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
