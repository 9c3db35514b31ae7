package io.sluice.lb;

import io.sluice.core.cluster.Host;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.time.Ticker;

import java.util.SplittableRandom;

/**
 * Random picking proportional to {@code clamp(weight) × slowStartFactor}: a host is drawn by its
 * clamped weight (binary search over prefix sums, or uniformly when weights are equal) and accepted
 * with probability equal to its warm-up factor — rejection sampling, so the distribution is exact
 * without rebuilding anything as factors change. Lock-free.
 */
final class RandomPicker implements Picker {

    private static final int MAX_TRIES = 16;

    private final Host[] hosts;
    private final double[] cumulative;
    private final boolean uniform;
    private final SlowStartConfig slowStart;
    private final Ticker ticker;
    private final ThreadRandom random;

    RandomPicker(Host[] hosts, double[] base, SlowStartConfig slowStart, Ticker ticker, ThreadRandom random) {
        this.hosts = hosts;
        this.cumulative = new double[base.length];
        double sum = 0;
        boolean equal = true;
        for (int i = 0; i < base.length; i++) {
            sum += base[i];
            cumulative[i] = sum;
            equal &= base[i] == base[0];
        }
        this.uniform = equal;
        this.slowStart = slowStart != null && slowStart.enabled() ? slowStart : null;
        this.ticker = ticker;
        this.random = random;
    }

    @Override
    public Host pick(boolean panic) {
        int n = hosts.length;
        if (n == 0) {
            return null;
        }
        SplittableRandom rnd = random.get();
        long now = slowStart != null ? ticker.nanoTime() : 0L;
        for (int t = 0; t < MAX_TRIES; t++) {
            Host h = hosts[draw(rnd)];
            if (!panic && !h.available()) {
                continue;
            }
            if (slowStart != null && t < MAX_TRIES - 1) {
                double f = Weights.slowStartFactor(slowStart, h.warmUp(), h.warmStartNanos(), now);
                if (f < 1.0 && rnd.nextDouble() >= f) {
                    continue;
                }
            }
            return h;
        }
        return panic ? hosts[rnd.nextInt(n)] : Picker.firstAvailable(hosts, rnd.nextInt(n));
    }

    private int draw(SplittableRandom rnd) {
        int n = hosts.length;
        if (uniform) {
            return rnd.nextInt(n);
        }
        double x = rnd.nextDouble() * cumulative[n - 1];
        int lo = 0;
        int hi = n - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (cumulative[mid] > x) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }
}
