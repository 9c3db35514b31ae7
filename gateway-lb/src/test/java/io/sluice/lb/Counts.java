package io.sluice.lb;

import io.sluice.core.cluster.Host;

import java.util.List;

/** Counting helpers for pick tests. */
final class Counts {

    private Counts() {
    }

    /** Picks {@code n} times and returns the counts per host, in host order. */
    static int[] batch(ClusterBalancer b, int n) {
        List<Host> hosts = b.hosts();
        int[] c = new int[hosts.size()];
        for (int i = 0; i < n; i++) {
            Host h = b.pick();
            c[hosts.indexOf(h)]++;
        }
        return c;
    }
}
