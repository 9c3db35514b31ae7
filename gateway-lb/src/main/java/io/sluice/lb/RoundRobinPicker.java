package io.sluice.lb;

import io.sluice.core.cluster.Host;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Plain rotation, weights ignored: used for {@code round_robin}, and for the weighted policies when
 * all weights are equal and nothing is warming up. Every skipped host consumes a slot, so the host
 * after an unavailable one does not get a double share. Lock-free.
 */
final class RoundRobinPicker implements Picker {

    private final Host[] hosts;
    private final AtomicInteger next;

    RoundRobinPicker(Host[] hosts, int start) {
        this.hosts = hosts;
        this.next = new AtomicInteger(start);
    }

    @Override
    public Host pick(boolean panic) {
        int n = hosts.length;
        for (int i = 0; i < n; i++) {
            Host h = hosts[Math.floorMod(next.getAndIncrement(), n)];
            if (panic || h.available()) {
                return h;
            }
        }
        return null;
    }
}
