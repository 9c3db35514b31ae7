package io.sluice.lb;

import io.sluice.core.cluster.Host;
import io.sluice.core.cluster.Outcome;
import io.sluice.core.config.OutlierConfig;
import io.sluice.core.time.Cancellable;
import io.sluice.core.time.Scheduler;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Passive outlier ejection: {@code consecutiveFailures} gateway failures in a row (connect failure,
 * reset, timeout, and 5xx when {@code count5xx}) eject a host for {@code base × ejections} (capped
 * at {@code maxEjectionTime}), while at most {@code maxEjectionPercent} of the hosts (at least one,
 * unless the percentage is 0) are ejected at once. The host returns when the time is up; the
 * {@link Sink} then starts its warm-up. The ejection count decays: it drops by one for every
 * {@code ejectionDecay} the host has served since it returned (or since the last decay step) without
 * being ejected again — applied lazily, when the count is next used. Counting is lock-free;
 * ejecting and returning take a lock.
 */
final class OutlierDetector implements AutoCloseable {

    /** Receives ejections and returns (called outside the detector's lock). */
    interface Sink {
        void ejected(Host host, long durationNanos, int ejections, String reason);

        void returned(Host host);
    }

    private final Scheduler scheduler;
    private final Sink sink;
    private volatile OutlierConfig config;
    private volatile Map<Host, State> states = Map.of();
    private boolean closed;

    OutlierDetector(OutlierConfig config, Scheduler scheduler, Sink sink) {
        this.config = config;
        this.scheduler = scheduler;
        this.sink = sink;
    }

    /** New config (null = off; running ejections still end on time) and host set (kept hosts keep their ejection count). */
    synchronized void update(OutlierConfig newConfig, List<Host> hosts) {
        Map<Host, State> old = states;
        Map<Host, State> fresh = new HashMap<>();
        for (Host h : hosts) {
            State s = old.get(h);
            fresh.put(h, s != null ? s : new State());
        }
        for (Map.Entry<Host, State> e : old.entrySet()) {
            if (!fresh.containsKey(e.getKey())) {
                e.getValue().returnTask.cancel();
            }
        }
        this.config = newConfig;
        this.states = Map.copyOf(fresh);
    }

    /** Counts one request outcome of {@code host}. */
    void onOutcome(Host host, Outcome outcome) {
        OutlierConfig cfg = config;
        if (cfg == null) {
            return;
        }
        State s = states.get(host);
        if (s == null) {
            return;
        }
        boolean failure = outcome.isGatewayFailure() || (cfg.count5xx() && outcome == Outcome.SERVER_ERROR);
        if (!failure) {
            if (s.consecutive.get() != 0) {
                s.consecutive.set(0);
            }
            return;
        }
        if (s.consecutive.incrementAndGet() >= cfg.consecutiveFailures() && !host.ejected()) {
            tryEject(host, s, cfg, outcome);
        }
    }

    private void tryEject(Host host, State s, OutlierConfig cfg, Outcome outcome) {
        long duration;
        int count;
        synchronized (this) {
            if (closed || host.ejected() || states.get(host) != s) {
                return;
            }
            s.consecutive.set(0);
            Map<Host, State> all = states;
            int ejectedNow = 0;
            for (Host h : all.keySet()) {
                if (h.ejected()) {
                    ejectedNow++;
                }
            }
            int pct = cfg.maxEjectionPercent();
            int allowed = pct == 0 ? 0 : Math.max(1, all.size() * pct / 100);
            if (ejectedNow >= allowed) {
                return;
            }
            long now = scheduler.ticker().nanoTime();
            decay(s, cfg, now);
            count = ++s.ejections;
            long base = cfg.baseEjectionTime().toNanos();
            long max = cfg.maxEjectionTime().toNanos();
            duration = base > max / count ? max : Math.min(max, base * count);
            host.eject(now + duration);
            s.returnTask = scheduler.schedule(() -> giveBack(host, s), duration);
        }
        sink.ejected(host, duration, count, cfg.consecutiveFailures() + " consecutive failures, last " + outcome);
    }

    private void giveBack(Host host, State s) {
        synchronized (this) {
            if (closed || states.get(host) != s || !host.ejected()) {
                return;
            }
            host.uneject();
            s.consecutive.set(0);
            s.inServiceSince = scheduler.ticker().nanoTime();
            s.returnTask = Cancellable.NOOP;
        }
        sink.returned(host);
    }

    /** The ejection count of {@code host} that multiplies its next ejection time, after decay (0 if unknown). */
    int ejections(Host host) {
        State s = states.get(host);
        if (s == null) {
            return 0;
        }
        synchronized (this) {
            OutlierConfig cfg = config;
            if (cfg != null && !host.ejected()) {
                decay(s, cfg, scheduler.ticker().nanoTime());
            }
            return s.ejections;
        }
    }

    /** Forgives one ejection per whole {@code ejectionDecay} in service since the last return or decay step. Caller holds the lock. */
    private static void decay(State s, OutlierConfig cfg, long now) {
        if (s.ejections == 0) {
            return;
        }
        long step = cfg.ejectionDecay().toNanos();
        long steps = (now - s.inServiceSince) / step;
        if (steps > 0) {
            s.ejections = (int) Math.max(0, s.ejections - steps);
            s.inServiceSince = s.ejections == 0 ? now : s.inServiceSince + steps * step;
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        for (State s : states.values()) {
            s.returnTask.cancel();
        }
    }

    private static final class State {
        final AtomicInteger consecutive = new AtomicInteger();
        int ejections;
        /** When the host last returned from ejection, advanced by each decay step. */
        long inServiceSince;
        Cancellable returnTask = Cancellable.NOOP;
    }
}
