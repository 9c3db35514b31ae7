package io.sluice.lb;

import java.util.concurrent.atomic.AtomicLong;

/**
 * An exact, deterministic, smooth split of requests among {@code n} sides by integer weights — the
 * cluster-level counterpart of the EDF host pick, for weighted clusters and mirror fractions.
 *
 * <p>The weights are divided by their greatest common divisor; the resulting cycle of
 * {@code total} slots is laid out once, at construction, by the smooth weighted round robin of
 * nginx (each step every side gains its weight, the richest side is chosen and pays the total),
 * which interleaves the sides as evenly as possible: for 90/10 one request in ten goes to the
 * second side, never ten in a row. {@link #next()} reads the slot of a shared atomic counter, so the
 * split is exact over every window of {@code total} consecutive requests across all event loops,
 * lock-free and allocation-free.
 *
 * <p>{@link #forHash(long)} maps a hash key to a side by cumulative ranges instead (sticky
 * splits): {@code key mod total} falls into side {@code i}'s range {@code [w0+..+w(i-1), w0+..+wi)}
 * of the unreduced weights. When a later side's weight grows at the expense of an earlier one's
 * (a canary going 1 → 5 → 50 → 100 %), the keys already on the later side stay there.
 */
public final class WeightedSchedule {

    private final byte[] cycle;
    private final int[] upper;
    private final int total;
    private final AtomicLong counter = new AtomicLong();

    private WeightedSchedule(byte[] cycle, int[] upper, int total) {
        this.cycle = cycle;
        this.upper = upper;
        this.total = total;
    }

    /**
     * @param weights one per side, each >= 0, at least one > 0, at most 127 sides and a total of at most 10 000
     */
    public static WeightedSchedule of(int[] weights) {
        int n = weights.length;
        if (n == 0 || n > Byte.MAX_VALUE) {
            throw new IllegalArgumentException("1 to 127 sides: " + n);
        }
        int g = 0;
        long sum = 0;
        int[] upper = new int[n];
        for (int i = 0; i < n; i++) {
            if (weights[i] < 0) {
                throw new IllegalArgumentException("negative weight " + weights[i]);
            }
            g = gcd(g, weights[i]);
            sum += weights[i];
            upper[i] = (int) Math.min(Integer.MAX_VALUE, sum);
        }
        if (sum <= 0 || sum > 1_000_000) {
            throw new IllegalArgumentException("total weight must be in [1, 1000000]: " + sum);
        }
        int len = (int) (sum / g);
        byte[] cycle = new byte[len];
        long[] current = new long[n];
        for (int k = 0; k < len; k++) {
            int best = -1;
            for (int i = 0; i < n; i++) {
                current[i] += weights[i] / g;
                if (weights[i] > 0 && (best < 0 || current[i] > current[best])) {
                    best = i;
                }
            }
            current[best] -= len;
            cycle[k] = (byte) best;
        }
        return new WeightedSchedule(cycle, upper, (int) sum);
    }

    private static int gcd(int a, int b) {
        while (b != 0) {
            int t = a % b;
            a = b;
            b = t;
        }
        return a;
    }

    /** The side of the next request. */
    public int next() {
        long c = counter.getAndIncrement();
        return cycle[(int) Long.remainderUnsigned(c, cycle.length)];
    }

    /** The side of a request with hash {@code key} (stable for a key while the weights stay). */
    public int forHash(long key) {
        int slot = (int) Long.remainderUnsigned(Hashing.mix(key ^ 0x5DEECE66DL), total);
        int[] u = upper;
        for (int i = 0; i < u.length; i++) {
            if (slot < u[i]) {
                return i;
            }
        }
        return u.length - 1;
    }

    /** Slots in one exact cycle (total weight over the gcd). */
    public int cycleLength() {
        return cycle.length;
    }
}
