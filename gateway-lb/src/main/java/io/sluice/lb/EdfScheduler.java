package io.sluice.lb;

import java.util.Arrays;

/**
 * Earliest-deadline-first scheduler over entries {@code 0..n-1}: each entry has a deadline
 * and a sequence number; the top is the smallest {@code (deadline, seq)} — FIFO among equal
 * deadlines, never heap order. Picking the top moves the clock {@code current} to its deadline and
 * re-queues it at {@code deadline + 1/w} with the weight valid <em>now</em>.
 *
 * <p>A binary heap packed into one {@code long[]}, two longs per node: the raw bits of the deadline
 * (deadlines are never negative, so their bits order like the numbers) and {@code seq << 21 | entry}
 * (sequence numbers are unique, so comparing the packed long compares the sequence). A comparison
 * reads two adjacent longs, a move copies two, nothing is allocated after construction.
 * Re-queueing the top uses the bottom-up variant (move the hole down along the smaller children to
 * a leaf, then sift the re-queued entry up), which needs one comparison per level instead of two
 * because a re-queued entry almost always belongs near the bottom. Sequence numbers are renumbered
 * (order kept) before they outgrow their 42 bits, and the clock is rebased before doubles lose
 * precision, so a scheduler runs forever. Not thread-safe; the caller serializes
 * {@link #top()} / {@link #advanceTop}.
 */
final class EdfScheduler {

    /** Deadlines are shifted back to 0 once the clock passes this, keeping doubles precise forever. */
    private static final double REBASE_AT = 1 << 20;
    static final int ENTRY_BITS = 21;
    /** Most entries a scheduler holds (about two million hosts). */
    static final int MAX_ENTRIES = 1 << ENTRY_BITS;
    private static final long ENTRY_MASK = MAX_ENTRIES - 1;
    /** Sequence numbers are renumbered when the counter reaches this. */
    static final long SEQ_LIMIT = 1L << (63 - ENTRY_BITS);

    /** {@code heap[2p]}: deadline bits of the node at heap position p; {@code heap[2p+1]}: seq and entry. */
    private final long[] heap;
    private final int n;
    private double current;
    private long counter;

    /** Adds entries {@code 0..weights.length-1} in order, entry {@code i} with weight {@code weights[i]}. */
    EdfScheduler(double[] weights) {
        this(weights, 0);
    }

    /** For tests: starts the sequence counter at {@code firstSeq} (to reach the renumbering quickly). */
    EdfScheduler(double[] weights, long firstSeq) {
        n = weights.length;
        if (n > MAX_ENTRIES) {
            throw new IllegalArgumentException("at most " + MAX_ENTRIES + " hosts per cluster: " + n);
        }
        heap = new long[2 * n];
        counter = firstSeq;
        for (int i = 0; i < n; i++) {
            siftUp(i, Double.doubleToRawLongBits(1.0 / Weights.sanitize(weights[i])), (++counter << ENTRY_BITS) | i);
        }
    }

    int size() {
        return n;
    }

    /** The entry with the earliest deadline (ties: queued first). Requires {@code size() > 0}. */
    int top() {
        return (int) (heap[1] & ENTRY_MASK);
    }

    /** Picks the top: the clock moves to its deadline, and it is re-queued {@code 1/w} later. */
    void advanceTop(double w) {
        long[] h = heap;
        long e = h[1] & ENTRY_MASK;
        double now = Double.longBitsToDouble(h[0]);
        current = now;
        long d = Double.doubleToRawLongBits(now + 1.0 / Weights.sanitize(w));
        int pos = 0;
        for (int child = 1; child < n; child = 2 * pos + 1) {
            int right = child + 1;
            if (right < n) {
                long dr = h[2 * right];
                long dc = h[2 * child];
                if (dr < dc || (dr == dc && h[2 * right + 1] < h[2 * child + 1])) {
                    child = right;
                }
            }
            h[2 * pos] = h[2 * child];
            h[2 * pos + 1] = h[2 * child + 1];
            pos = child;
        }
        siftUp(pos, d, (++counter << ENTRY_BITS) | e);
        if (counter >= SEQ_LIMIT - 1) {
            renumber();
        }
        if (now > REBASE_AT) {
            rebase();
        }
    }

    /** The virtual clock (for tests). */
    double current() {
        return current;
    }

    /** The sequence counter (for tests). */
    long counter() {
        return counter;
    }

    private void rebase() {
        double c = current;
        for (int p = 0; p < n; p++) {
            heap[2 * p] = Double.doubleToRawLongBits(Double.longBitsToDouble(heap[2 * p]) - c);
        }
        current = 0;
    }

    /**
     * Gives the nodes the sequence numbers {@code 1..n} in their {@code (deadline, seq)} order. A
     * sorted array is a valid heap, and relative order — all that the tie-break uses — is unchanged.
     */
    private void renumber() {
        Integer[] order = new Integer[n];
        for (int p = 0; p < n; p++) {
            order[p] = p;
        }
        Arrays.sort(order, (a, b) -> {
            int c = Long.compare(heap[2 * a], heap[2 * b]);
            return c != 0 ? c : Long.compare(heap[2 * a + 1], heap[2 * b + 1]);
        });
        long[] sorted = new long[2 * n];
        for (int k = 0; k < n; k++) {
            int p = order[k];
            sorted[2 * k] = heap[2 * p];
            sorted[2 * k + 1] = ((k + 1L) << ENTRY_BITS) | (heap[2 * p + 1] & ENTRY_MASK);
        }
        System.arraycopy(sorted, 0, heap, 0, 2 * n);
        counter = n;
    }

    private void siftUp(int pos, long d, long s) {
        long[] h = heap;
        while (pos > 0) {
            int parent = (pos - 1) >>> 1;
            long dp = h[2 * parent];
            if (d > dp || (d == dp && s > h[2 * parent + 1])) {
                break;
            }
            h[2 * pos] = dp;
            h[2 * pos + 1] = h[2 * parent + 1];
            pos = parent;
        }
        h[2 * pos] = d;
        h[2 * pos + 1] = s;
    }
}
