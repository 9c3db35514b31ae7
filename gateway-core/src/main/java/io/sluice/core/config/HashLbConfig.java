package io.sluice.core.config;

/**
 * Table sizes of the hash load balancers ({@code lb: ring_hash} / {@code maglev}).
 *
 * @param minRingSize  ring_hash: points per unit of host weight, so the fewest points on the ring (default 1024);
 *                     more points spread keys more evenly
 * @param maxRingSize  ring_hash: most points on the ring (default 1 048 576: 12 MiB)
 * @param maglevTableSize maglev: lookup table size, a prime (default 65537); larger = finer weights
 */
public record HashLbConfig(int minRingSize, int maxRingSize, int maglevTableSize) {

    public static final int DEFAULT_MIN_RING_SIZE = 1024;
    public static final int DEFAULT_MAX_RING_SIZE = 1024 * 1024;
    public static final int DEFAULT_MAGLEV_TABLE_SIZE = 65537;
    /** Largest ring or table (memory: 12 bytes a ring point, 4 bytes a maglev slot). */
    public static final int MAX_SIZE = 8 * 1024 * 1024;

    public HashLbConfig {
        Checks.range("min_ring_size", minRingSize, 1, MAX_SIZE);
        Checks.range("max_ring_size", maxRingSize, 1, MAX_SIZE);
        if (minRingSize > maxRingSize) {
            throw new ConfigException("min_ring_size", minRingSize, "at most max_ring_size (" + maxRingSize + ")");
        }
        Checks.range("table_size", maglevTableSize, 2, MAX_SIZE);
        if (!isPrime(maglevTableSize)) {
            throw new ConfigException("table_size", maglevTableSize, "a prime number such as 65537 or 655373");
        }
    }

    public static HashLbConfig defaults() {
        return new HashLbConfig(DEFAULT_MIN_RING_SIZE, DEFAULT_MAX_RING_SIZE, DEFAULT_MAGLEV_TABLE_SIZE);
    }

    private static boolean isPrime(int n) {
        if (n < 2) {
            return false;
        }
        for (int d = 2; (long) d * d <= n; d++) {
            if (n % d == 0) {
                return false;
            }
        }
        return true;
    }
}
