package io.sluice.lb;

import io.sluice.core.cluster.Host;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.time.Ticker;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Weighted picking with one {@link EdfScheduler} per cluster, shared by all event loops under a
 * short lock, so ratios are exact across threads. The weight of the picked host is recomputed at
 * pick time: {@code clamp(weight) [/ (active + 1) ^ bias] × slowStartFactor}.
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
    private final EdfScheduler edf;
    private final int tries;
    private final AtomicInteger fallback = new AtomicInteger();

    /**
     * @param base      clamped configured weights
     * @param slowStart null when off
     * @param bias      active-request bias ({@code least_request}), 0 = none
     * @param prePicks  initial throw-away picks
     */
    EdfPicker(Host[] hosts, double[] base, SlowStartConfig slowStart, double bias, Ticker ticker, int prePicks) {
        this.hosts = hosts;
        this.base = base;
        this.slowStart = slowStart != null && slowStart.enabled() ? slowStart : null;
        this.bias = bias;
        this.ticker = ticker;
        this.tries = Math.min(hosts.length, MAX_TRIES);
        long now = ticker.nanoTime();
        double[] initial = new double[hosts.length];
        for (int i = 0; i < initial.length; i++) {
            initial[i] = weight(i, now);
        }
        this.edf = new EdfScheduler(initial);
        synchronized (edf) {
            for (int k = 0; k < prePicks && hosts.length > 0; k++) {
                edf.advanceTop(weight(edf.top(), now));
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
        long now = slowStart != null ? ticker.nanoTime() : 0L;
        synchronized (edf) {
            for (int t = 0; t < tries; t++) {
                int i = edf.top();
                Host h = hosts[i];
                double w = weight(i, now);
                if (panic || h.available()) {
                    edf.advanceTop(w);
                    return h;
                }
                edf.advanceTop(Math.min(w, 1.0));
            }
        }
        return panic ? hosts[0] : Picker.firstAvailable(hosts, fallback.getAndIncrement());
    }

    /** The effective weight of entry {@code i}: finite and > 0. */
    double weight(int i, long now) {
        return Weights.effective(base[i], hosts[i], slowStart, bias, now);
    }
}
