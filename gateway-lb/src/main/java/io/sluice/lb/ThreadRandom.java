package io.sluice.lb;

import java.util.SplittableRandom;

/**
 * Per-thread random generators split from one seeded root, so pick-time randomness needs no lock and
 * a single-threaded test sees one deterministic sequence.
 */
final class ThreadRandom {

    private final SplittableRandom root;
    private final ThreadLocal<SplittableRandom> local;

    ThreadRandom(long seed) {
        this.root = new SplittableRandom(seed);
        this.local = ThreadLocal.withInitial(this::split);
    }

    private SplittableRandom split() {
        synchronized (root) {
            return root.split();
        }
    }

    SplittableRandom get() {
        return local.get();
    }
}
