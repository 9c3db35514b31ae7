package io.sluice.lb;

/**
 * Earliest-deadline-first scheduler over entries {@code 0..n-1} (spec §2): each entry has a deadline
 * and a sequence number; the top is the smallest {@code (deadline, seq)} — FIFO among equal
 * deadlines, never heap order. Picking the top moves the clock {@code current} to its deadline and
 * re-queues it at {@code deadline + 1/w} with the weight valid <em>now</em>.
 *
 * <p>A binary heap stored as three parallel primitive arrays indexed by heap position (deadline,
 * sequence, entry), so comparisons never chase a pointer and nothing is allocated after
 * construction. Re-queueing the top uses the bottom-up variant (move the hole down along the smaller
 * children to a leaf, then sift the re-queued entry up), which needs one comparison per level instead
 * of two because a re-queued entry almost always belongs near the bottom. Not thread-safe; callers
 * hold the monitor of this object around {@link #top()} / {@link #advanceTop}.
 */
final class EdfScheduler {

    /** Deadlines are shifted back to 0 once the clock passes this, keeping doubles precise forever. */
    private static final double REBASE_AT = 1 << 20;

    private final double[] deadline;
    private final long[] seq;
    private final int[] entry;
    private double current;
    private long counter;

    /** Adds entries {@code 0..weights.length-1} in order, entry {@code i} with weight {@code weights[i]}. */
    EdfScheduler(double[] weights) {
        int n = weights.length;
        deadline = new double[n];
        seq = new long[n];
        entry = new int[n];
        for (int i = 0; i < n; i++) {
            siftUp(i, current + 1.0 / Weights.sanitize(weights[i]), ++counter, i);
        }
    }

    int size() {
        return entry.length;
    }

    /** The entry with the earliest deadline (ties: queued first). Requires {@code size() > 0}. */
    int top() {
        return entry[0];
    }

    /** Picks the top: the clock moves to its deadline, and it is re-queued {@code 1/w} later. */
    void advanceTop(double w) {
        int e = entry[0];
        current = deadline[0];
        double d = current + 1.0 / Weights.sanitize(w);
        int n = entry.length;
        int pos = 0;
        for (int child = 1; child < n; child = 2 * pos + 1) {
            int right = child + 1;
            if (right < n && less(deadline[right], seq[right], deadline[child], seq[child])) {
                child = right;
            }
            move(child, pos);
            pos = child;
        }
        siftUp(pos, d, ++counter, e);
        if (current > REBASE_AT) {
            rebase();
        }
    }

    /** The virtual clock (for tests). */
    double current() {
        return current;
    }

    private void rebase() {
        double c = current;
        for (int i = 0; i < deadline.length; i++) {
            deadline[i] -= c;
        }
        current = 0;
    }

    private static boolean less(double da, long sa, double db, long sb) {
        return da < db || (da == db && sa < sb);
    }

    private void move(int from, int to) {
        deadline[to] = deadline[from];
        seq[to] = seq[from];
        entry[to] = entry[from];
    }

    private void siftUp(int pos, double d, long s, int e) {
        while (pos > 0) {
            int parent = (pos - 1) >>> 1;
            if (!less(d, s, deadline[parent], seq[parent])) {
                break;
            }
            move(parent, pos);
            pos = parent;
        }
        deadline[pos] = d;
        seq[pos] = s;
        entry[pos] = e;
    }
}
