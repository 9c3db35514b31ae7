package io.sluice.lb;

import io.sluice.core.cluster.Host;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.time.Ticker;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Weighted picking with one {@link EdfScheduler} per cluster, shared by all event loops under a
 * short lock, so ratios are exact across threads. The weight of the picked host is re-evaluated
 * when it is re-queued: {@code clamp(weight) × slowStartFactor [/ (active + 1) ^ bias]}.
 *
 * <p>The slow-start part {@code clamp(weight) × factor} is cached per host and recomputed — at the
 * exact current time — only when the host's warm-up clock T0 changed (it started warming) or the
 * cluster's {@link WarmUpGrid} moved on since the last computation; a host that is not warming
 * never reads the clock. So a pick costs a heap re-queue plus a few array reads, and the factor
 * lags the exact curve by at most one grid step (a thousandth of the window, 10 ms – 1 s).
 *
 * <p>Unavailable hosts stay in the heap (so a recovering host's deadline stays close to the clock)
 * and are skipped; a skipped host is re-queued with {@code min(w, 1)}, so a heavy unhealthy host is
 * met at most once per virtual time unit and cannot starve healthy ones (MOSN #1867). After
 * {@code min(n, 64)} skips in a row the picker falls back to a scan for any available host.
 */
final class EdfPicker implements Picker {

    private static final int MAX_TRIES = 64;

    private final Host[] hosts;
    private final double[] base;
    private final SlowStartConfig slowStart;
    private final double bias;
    private final Ticker ticker;
    private final WarmUpGrid grid;
    private final EdfScheduler edf;
    private final int tries;
    private final AtomicInteger fallback = new AtomicInteger();
    /** Per entry, guarded by {@code edf}: {@code base × slowStartFactor}, the T0 and grid epoch it was computed for. */
    private final double[] cached;
    private final long[] cachedT0;
    private final int[] cachedEpoch;

    /**
     * @param base      clamped configured weights
     * @param slowStart null when off
     * @param bias      active-request bias ({@code least_request}), 0 = none
     * @param grid      the cluster's warm-up epoch
     * @param prePicks  initial throw-away picks
     */
    EdfPicker(Host[] hosts, double[] base, SlowStartConfig slowStart, double bias, Ticker ticker, WarmUpGrid grid,
              int prePicks) {
        this.hosts = hosts;
        this.base = base;
        this.slowStart = slowStart != null && slowStart.enabled() ? slowStart : null;
        this.bias = bias;
        this.ticker = ticker;
        this.grid = grid;
        this.tries = Math.min(hosts.length, MAX_TRIES);
        int n = hosts.length;
        cached = new double[n];
        cachedT0 = new long[n];
        cachedEpoch = new int[n];
        long now = ticker.nanoTime();
        int epoch = grid.epoch();
        double[] initial = new double[n];
        for (int i = 0; i < n; i++) {
            refresh(i, hosts[i].warmStartNanos(), epoch, now);
            initial[i] = withBias(cached[i], hosts[i]);
        }
        this.edf = new EdfScheduler(initial);
        synchronized (edf) {
            for (int k = 0; k < prePicks && n > 0; k++) {
                int i = edf.top();
                edf.advanceTop(weight(i, hosts[i]));
            }
        }
    }

    @Override
    public boolean weighted() {
        return true;
    }

    @Override
    public Host pick(boolean panic) {
        if (hosts.length == 0) {
            return null;
        }
        synchronized (edf) {
            for (int t = 0; t < tries; t++) {
                int i = edf.top();
                Host h = hosts[i];
                double w = weight(i, h);
                if (panic || h.available()) {
                    edf.advanceTop(w);
                    return h;
                }
                edf.advanceTop(Math.min(w, 1.0));
            }
        }
        return panic ? hosts[0] : Picker.firstAvailable(hosts, fallback.getAndIncrement());
    }

    /** The effective weight of entry {@code i} now (cached slow-start part); caller holds {@code edf}. */
    private double weight(int i, Host h) {
        if (slowStart != null) {
            long t0 = h.warmStartNanos();
            if (t0 != cachedT0[i]) {
                refresh(i, t0, grid.epoch(), ticker.nanoTime());
            } else if (t0 != Host.NOT_WARMING) {
                int epoch = grid.epoch();
                if (epoch != cachedEpoch[i]) {
                    refresh(i, t0, epoch, ticker.nanoTime());
                }
            }
        }
        return withBias(cached[i], h);
    }

    private void refresh(int i, long t0, int epoch, long now) {
        cached[i] = base[i] * Weights.slowStartFactor(slowStart, hosts[i].warmUp(), t0, now);
        cachedT0[i] = t0;
        cachedEpoch[i] = epoch;
    }

    private double withBias(double w, Host h) {
        if (bias > 0) {
            int active = h.activeRequests();
            if (active > 0) {
                return bias == 1.0 ? w / (active + 1.0) : w / Math.pow(active + 1.0, bias);
            }
        }
        return w;
    }
}
