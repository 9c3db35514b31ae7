package io.sluice.lb;

import io.sluice.core.cluster.Host;

import java.util.SplittableRandom;

/**
 * Unweighted {@code least_request}: power of N choices — sample {@code choices} hosts at random
 * (with replacement) and take the one with the fewest active requests; with no more hosts than
 * choices, all hosts are compared (ties broken from a random start). Lock-free. The weighted variant
 * is an {@link EdfPicker} with an active-request bias.
 */
final class LeastRequestPicker implements Picker {

    private final Host[] hosts;
    private final int choices;
    private final ThreadRandom random;

    LeastRequestPicker(Host[] hosts, int choices, ThreadRandom random) {
        this.hosts = hosts;
        this.choices = choices;
        this.random = random;
    }

    @Override
    public Host pick(boolean panic) {
        int n = hosts.length;
        if (n == 0) {
            return null;
        }
        SplittableRandom rnd = random.get();
        Host best = null;
        if (n <= choices) {
            int start = rnd.nextInt(n);
            for (int i = 0; i < n; i++) {
                best = better(best, hosts[(start + i) % n], panic);
            }
            return best;
        }
        for (int c = 0, sampled = 0; c < 2 * choices && sampled < choices; c++) {
            Host h = hosts[rnd.nextInt(n)];
            if (panic || h.available()) {
                sampled++;
                best = better(best, h, true);
            }
        }
        return best != null ? best : Picker.firstAvailable(hosts, rnd.nextInt(n));
    }

    private static Host better(Host best, Host h, boolean eligible) {
        if (!eligible && !h.available()) {
            return best;
        }
        return best == null || h.activeRequests() < best.activeRequests() ? h : best;
    }
}
