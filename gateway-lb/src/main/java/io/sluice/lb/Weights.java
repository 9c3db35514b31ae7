package io.sluice.lb;

import io.sluice.core.cluster.Host;
import io.sluice.core.config.SlowStartConfig;

/**
 * Pure weight arithmetic: the clamp of configured weights, the slow-start factor and the guard that
 * keeps every effective weight finite and positive (MOSN #1969, #2305; Envoy #19526).
 */
final class Weights {

    static final int MIN_WEIGHT = 1;
    static final int MAX_WEIGHT = 128;
    /** Smallest effective weight the scheduler accepts (a deadline at most 10^6 virtual units ahead). */
    static final double MIN_EFFECTIVE = 1e-6;
    static final double MAX_EFFECTIVE = 1e6;

    private static final long ONE_SECOND = 1_000_000_000L;

    private Weights() {
    }

    /** The configured weight clamped into [1, 128]; this happens before any factor, never after. */
    static int clamp(int configured) {
        return Math.max(MIN_WEIGHT, Math.min(MAX_WEIGHT, configured));
    }

    /**
     * The base weight of a host: configured hosts are clamped into [1, 128] (MOSN); hosts from a
     * discovery source keep their registry weight up to 10 000 (SOFARPC weights are commonly 100 and
     * up: 200:100 must stay 2:1).
     */
    static int base(Host host) {
        return host.discovered() ? Math.max(MIN_WEIGHT, Math.min(10_000, host.weight())) : clamp(host.weight());
    }

    /** Keeps a computed weight finite and > 0 (NaN and 0 become the minimum). */
    static double sanitize(double w) {
        if (w >= MIN_EFFECTIVE) {
            return w <= MAX_EFFECTIVE ? w : MAX_EFFECTIVE;
        }
        return MIN_EFFECTIVE;
    }

    /**
     * Slow-start factor {@code max(minWeight, (max(1s, now - t0) / window) ^ (1 / aggression))}, or 1
     * when slow start is off, the host is not warming, or the window has passed.
     */
    static double slowStartFactor(SlowStartConfig cfg, long t0, long now) {
        return slowStartFactor(cfg, null, t0, now);
    }

    /**
     * The factor of a host with its own warm-up {@code own} (a discovery source's {@code warmupTime} /
     * {@code warmupWeight}; null = none): its window and floor replace the cluster's, the curve
     * (aggression) stays {@code cfg}'s.
     */
    static double slowStartFactor(SlowStartConfig cfg, Host.WarmUp own, long t0, long now) {
        if (cfg == null || t0 == Host.NOT_WARMING) {
            return 1.0;
        }
        long window = own != null ? own.windowNanos() : cfg.window().toNanos();
        if (window <= 0) {
            return 1.0;
        }
        long elapsed = now - t0;
        if (elapsed >= window) {
            return 1.0;
        }
        double f = (double) Math.max(ONE_SECOND, elapsed) / window;
        if (f >= 1.0) {
            return 1.0;
        }
        if (cfg.aggression() != 1.0) {
            f = Math.pow(f, 1.0 / cfg.aggression());
        }
        return Math.max(own != null && own.ownFloor() ? own.floor() : cfg.minWeight(), f);
    }

    /** The warm-up window of {@code host}: its own (discovery) or the cluster's; 0 = none. */
    static long windowNanos(SlowStartConfig cfg, Host host) {
        Host.WarmUp own = host.warmUp();
        return own != null ? own.windowNanos() : cfg == null ? 0 : cfg.window().toNanos();
    }

    /** True while {@code host} is inside its warm-up window. */
    static boolean warming(SlowStartConfig cfg, Host host, long now) {
        long t0 = host.warmStartNanos();
        return cfg != null && t0 != Host.NOT_WARMING && now - t0 < windowNanos(cfg, host);
    }

    /**
     * {@code base [/ (active + 1) ^ bias] × slowStartFactor}, sanitized. {@code slowStart} null = off,
     * {@code bias} 0 = no active-request term.
     */
    static double effective(double base, Host host, SlowStartConfig slowStart, double bias, long now) {
        double w = base;
        if (bias > 0) {
            int active = host.activeRequests();
            if (active > 0) {
                w = bias == 1.0 ? w / (active + 1.0) : w / Math.pow(active + 1.0, bias);
            }
        }
        if (slowStart != null) {
            long t0 = host.warmStartNanos();
            if (t0 != Host.NOT_WARMING) {
                w *= slowStartFactor(slowStart, host.warmUp(), t0, now);
            }
        }
        return sanitize(w);
    }
}
