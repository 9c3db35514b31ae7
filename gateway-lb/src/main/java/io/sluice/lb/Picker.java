package io.sluice.lb;

import io.sluice.core.cluster.Host;

/**
 * One load-balancing algorithm over one immutable host snapshot. Implementations are thread-safe
 * and allocation-free per pick.
 */
interface Picker {

    /**
     * Picks a host that is {@link Host#available() available} — or any host when {@code panic} —
     * or returns null when there is none.
     */
    Host pick(boolean panic);

    /** Like {@link #pick(boolean)} for a request with hash key {@code key}; only hash pickers use the key. */
    default Host pick(boolean panic, long key) {
        return pick(panic);
    }

    /** Whether this picker applies per-host dynamic weights (EDF). */
    default boolean weighted() {
        return false;
    }

    /** Scans from {@code start} for the first available host; null if none. */
    static Host firstAvailable(Host[] hosts, int start) {
        int n = hosts.length;
        for (int i = 0; i < n; i++) {
            Host h = hosts[Math.floorMod(start + i, n)];
            if (h.available()) {
                return h;
            }
        }
        return null;
    }
}
