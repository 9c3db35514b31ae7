package io.sluice.bench;

/**
 * A log-linear latency histogram in microseconds (exact below 128 µs, then 64 sub-buckets per
 * power of two: under 1.6% error), cheap enough to record every request of a load run. Not
 * thread-safe: one per load thread, {@link #add merged} at the end.
 */
public final class LatencyHistogram {

    private static final int LINEAR = 128;
    private static final int SUB_BITS = 6;
    private static final int SUB = 1 << SUB_BITS;
    private static final int BUCKETS = LINEAR + (64 - 7) * SUB;

    private final long[] counts = new long[BUCKETS];
    private long total;
    private long min = Long.MAX_VALUE;
    private long max;
    private double sum;
    private double sumSquares;

    /** Records one latency in nanoseconds. */
    public void recordNanos(long nanos) {
        long micros = Math.max(0, nanos / 1_000);
        counts[index(micros)]++;
        total++;
        min = Math.min(min, micros);
        max = Math.max(max, micros);
        sum += micros;
        sumSquares += (double) micros * micros;
    }

    static int index(long v) {
        if (v < LINEAR) {
            return (int) v;
        }
        int e = 63 - Long.numberOfLeadingZeros(v); // >= 7
        int sub = (int) ((v >>> (e - SUB_BITS)) & (SUB - 1));
        return LINEAR + (e - 7) * SUB + sub;
    }

    /** The upper edge (µs) of bucket {@code i}. */
    static long valueAt(int i) {
        if (i < LINEAR) {
            return i;
        }
        int e = (i - LINEAR) / SUB + 7;
        int sub = (i - LINEAR) % SUB;
        long base = (1L << e) | ((long) sub << (e - SUB_BITS));
        return base + (1L << (e - SUB_BITS)) - 1;
    }

    public void add(LatencyHistogram other) {
        for (int i = 0; i < BUCKETS; i++) {
            counts[i] += other.counts[i];
        }
        total += other.total;
        min = Math.min(min, other.min);
        max = Math.max(max, other.max);
        sum += other.sum;
        sumSquares += other.sumSquares;
    }

    public long count() {
        return total;
    }

    public long minMicros() {
        return total == 0 ? 0 : min;
    }

    public long maxMicros() {
        return max;
    }

    public double meanMicros() {
        return total == 0 ? 0 : sum / total;
    }

    public double stdDevMicros() {
        if (total < 2) {
            return 0;
        }
        double mean = meanMicros();
        return Math.sqrt(Math.max(0, sumSquares / total - mean * mean));
    }

    /** The latency (µs) at or under which {@code percentile}% of the recorded values fall. */
    public long percentileMicros(double percentile) {
        if (total == 0) {
            return 0;
        }
        long rank = (long) Math.ceil(percentile / 100.0 * total);
        long seen = 0;
        for (int i = 0; i < BUCKETS; i++) {
            seen += counts[i];
            if (seen >= Math.max(1, rank)) {
                return Math.min(valueAt(i), max);
            }
        }
        return max;
    }

    /** The fraction of recorded values between {@code lo} and {@code hi} µs (bucket resolution). */
    public double fractionWithin(double lo, double hi) {
        if (total == 0) {
            return 0;
        }
        long in = 0;
        for (int i = 0; i < BUCKETS; i++) {
            long v = valueAt(i);
            if (counts[i] != 0 && v >= lo && v <= hi) {
                in += counts[i];
            }
        }
        return (double) in / total;
    }

    /** Formats microseconds the way wrk does: 812.00us, 1.25ms, 2.10s. */
    public static String format(double micros) {
        if (micros < 1_000) {
            return String.format("%.2fus", micros);
        }
        if (micros < 1_000_000) {
            return String.format("%.2fms", micros / 1_000);
        }
        return String.format("%.2fs", micros / 1_000_000);
    }
}
