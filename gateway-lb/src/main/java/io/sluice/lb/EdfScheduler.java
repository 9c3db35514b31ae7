package io.sluice.lb;

/**
 * Earliest-deadline-first scheduler over entries {@code 0..n-1} (spec §2): each entry has a deadline
 * and a sequence number; the top is the smallest {@code (deadline, seq)} — FIFO among equal
 * deadlines, never heap order. Picking the top moves the clock {@code current} to its deadline and
 * re-queues it at {@code deadline + 1/w} with the weight valid <em>now</em>.
 *
 * <p>An index heap over parallel primitive arrays: no allocation after construction. Not
 * thread-safe; callers hold the monitor of this object around {@link #top()} / {@link #advanceTop}.
 */
final class EdfScheduler {

    /** Deadlines are shifted back to 0 once the clock passes this, keeping doubles precise forever. */
    private static final double REBASE_AT = 1 << 20;

    private final int[] heap;
    private final double[] deadline;
    private final long[] seq;
    private double current;
    private long counter;

    /** Adds entries {@code 0..weights.length-1} in order, entry {@code i} with weight {@code weights[i]} (> 0). */
    EdfScheduler(double[] weights) {
        int n = weights.length;
        heap = new int[n];
        deadline = new double[n];
        seq = new long[n];
        for (int i = 0; i < n; i++) {
            deadline[i] = current + 1.0 / Weights.sanitize(weights[i]);
            seq[i] = ++counter;
            heap[i] = i;
            siftUp(i);
        }
    }

    int size() {
        return heap.length;
    }

    /** The entry with the earliest deadline (ties: queued first). Requires {@code size() > 0}. */
    int top() {
        return heap[0];
    }

    /** Picks the top: the clock moves to its deadline, and it is re-queued {@code 1/w} later. */
    void advanceTop(double w) {
        int e = heap[0];
        current = deadline[e];
        deadline[e] = current + 1.0 / Weights.sanitize(w);
        seq[e] = ++counter;
        siftDown(0);
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

    private boolean less(int a, int b) {
        double da = deadline[a];
        double db = deadline[b];
        return da < db || (da == db && seq[a] < seq[b]);
    }

    private void siftUp(int pos) {
        int e = heap[pos];
        while (pos > 0) {
            int parent = (pos - 1) >>> 1;
            int p = heap[parent];
            if (!less(e, p)) {
                break;
            }
            heap[pos] = p;
            pos = parent;
        }
        heap[pos] = e;
    }

    private void siftDown(int pos) {
        int n = heap.length;
        int e = heap[pos];
        int half = n >>> 1;
        while (pos < half) {
            int child = 2 * pos + 1;
            int c = heap[child];
            int right = child + 1;
            if (right < n && less(heap[right], c)) {
                child = right;
                c = heap[child];
            }
            if (!less(c, e)) {
                break;
            }
            heap[pos] = c;
            pos = child;
        }
        heap[pos] = e;
    }
}
