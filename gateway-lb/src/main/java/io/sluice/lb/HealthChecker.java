package io.sluice.lb;

import io.sluice.core.cluster.HealthStatus;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.DurationFormat;
import io.sluice.core.config.HealthCheckConfig;
import io.sluice.core.time.Cancellable;
import io.sluice.core.time.Scheduler;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Active health checking of one cluster's hosts on an injected {@link Scheduler}: per host, the first
 * probe after {@code initialDelay}, then fixed-delay probing {@code interval + rnd[0, jitter)} after
 * each completed attempt. Each attempt has an id and a timeout; a result for an older attempt (or a
 * second result) is ignored. Results feed a {@link HealthState}; a transition is written to
 * {@link Host#health(HealthStatus)} and reported to the {@link Sink} (outside any lock).
 */
final class HealthChecker implements AutoCloseable {

    /** Receives transitions. */
    interface Sink {
        void healthChanged(Host host, HealthStatus from, HealthStatus to, String reason);
    }

    private final HealthCheckConfig config;
    private final HealthProbe probe;
    private final Scheduler scheduler;
    private final ThreadRandom random;
    private final Sink sink;
    private final Map<Host, Check> checks = new HashMap<>();
    private boolean closed;

    HealthChecker(HealthCheckConfig config, HealthProbe probe, Scheduler scheduler, ThreadRandom random, Sink sink) {
        this.config = config;
        this.probe = probe;
        this.scheduler = scheduler;
        this.random = random;
        this.sink = sink;
    }

    HealthCheckConfig config() {
        return config;
    }

    /** Starts checking hosts not yet checked and stops checking hosts no longer listed. */
    synchronized void hosts(List<Host> hosts) {
        if (closed) {
            return;
        }
        Map<Host, Check> keep = new HashMap<>();
        for (Host h : hosts) {
            Check c = checks.remove(h);
            if (c == null) {
                c = new Check(h);
                c.start();
            }
            keep.put(h, c);
        }
        for (Check gone : checks.values()) {
            gone.stop();
        }
        checks.clear();
        checks.putAll(keep);
    }

    @Override
    public synchronized void close() {
        closed = true;
        for (Check c : checks.values()) {
            c.stop();
        }
        checks.clear();
    }

    private long nextDelayNanos() {
        long jitter = config.intervalJitter().toNanos();
        long d = config.interval().toNanos();
        return jitter > 0 ? d + random.get().nextLong(jitter) : d;
    }

    /** The probing loop of one host. */
    private final class Check {
        private final Host host;
        private final HealthState state;
        private long attempt;
        private boolean inFlight;
        private boolean stopped;
        private Cancellable next = Cancellable.NOOP;
        private Cancellable timeout = Cancellable.NOOP;

        Check(Host host) {
            this.host = host;
            this.state = new HealthState(host.health(), config.healthyThreshold(), config.unhealthyThreshold());
        }

        synchronized void start() {
            next = scheduler.schedule(this::run, config.initialDelay().toNanos());
        }

        synchronized void stop() {
            stopped = true;
            next.cancel();
            timeout.cancel();
        }

        private void run() {
            long id;
            synchronized (this) {
                if (stopped) {
                    return;
                }
                id = ++attempt;
                inFlight = true;
                timeout = scheduler.schedule(
                        () -> complete(id, false, "timeout after " + DurationFormat.format(config.timeout())),
                        config.timeout().toNanos());
            }
            try {
                probe.probe(host, (success, reason) -> complete(id, success, reason));
            } catch (RuntimeException e) {
                complete(id, false, "probe failed: " + e);
            }
        }

        private void complete(long id, boolean success, String reason) {
            HealthStatus from;
            HealthStatus to;
            synchronized (this) {
                if (stopped || !inFlight || id != attempt) {
                    return; // late, duplicate, or after stop
                }
                inFlight = false;
                timeout.cancel();
                from = state.status();
                to = state.record(success);
                if (to != null) {
                    host.health(to);
                }
                next = scheduler.schedule(this::run, nextDelayNanos());
            }
            if (to != null) {
                sink.healthChanged(host, from, to, reason != null ? reason : (success ? "probe passed" : "probe failed"));
            }
        }
    }
}
