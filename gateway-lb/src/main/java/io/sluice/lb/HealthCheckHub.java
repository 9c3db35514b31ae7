package io.sluice.lb;

import io.sluice.core.cluster.HealthStatus;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.DurationFormat;
import io.sluice.core.config.HealthCheckConfig;
import io.sluice.core.time.Cancellable;
import io.sluice.core.time.Scheduler;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The probing loops of every cluster of one gateway, shared: one loop per address and health-check
 * settings ({@link HealthCheckConfig} equality: probe, HTTP request, expected statuses, interval,
 * timeout, jitter, initial delay, thresholds). When several clusters list the same address with the
 * same settings, one probe runs and every cluster's {@link Host} sees the result (each cluster
 * reports the transition for its own host: a log line, a metric, a warm-up). A loop starts with its
 * first subscriber (using that cluster's probe, scheduler and random source) and stops with its last.
 *
 * <p>Per loop: the first probe after {@code initialDelay}, then fixed-delay probing
 * {@code interval + rnd[0, jitter)} after each completed attempt; each attempt has an id and a
 * timeout, and a result for an older attempt (or a second result) is ignored. Results feed a pure
 * {@link HealthState} that starts from the first subscriber's current health, so a host whose check
 * is re-created on reload keeps its state. Thread-safe.
 *
 * <p>Pass one hub to every balancer of a gateway with {@link LbContext#withHealthChecks}; a balancer
 * without one gets a private hub (its clusters probe on their own).
 */
public final class HealthCheckHub {

    /** Receives the transitions of one subscribed host. */
    interface Sink {
        void healthChanged(Host host, HealthStatus from, HealthStatus to, String reason);
    }

    /**
     * What a loop is shared by: the address, the check's settings and how the probe connects (the
     * cluster's upstream TLS settings, null = cleartext: a TLS and a cleartext cluster listing one
     * address must not share a probe).
     */
    private record Key(String address, HealthCheckConfig config, Object transport) {
    }

    private final Map<Key, Loop> loops = new HashMap<>();

    /** Probing loops running now (one per distinct address and settings). */
    public synchronized int loops() {
        return loops.size();
    }

    /**
     * Starts delivering the health of {@code host} (checked with {@code config}) to {@code sink},
     * joining the running loop for its address and settings or starting one. A host joining a loop
     * takes its current state at once (reported to the sink if it changes the host's health).
     */
    Subscription subscribe(Host host, HealthCheckConfig config, HealthProbe probe, Scheduler scheduler,
                           ThreadRandom random, Sink sink) {
        return subscribe(host, config, null, probe, scheduler, random, sink);
    }

    /** {@link #subscribe} for a probe that connects as {@code transport} says (e.g. the cluster's TLS settings; null: plain). */
    Subscription subscribe(Host host, HealthCheckConfig config, Object transport, HealthProbe probe, Scheduler scheduler,
                           ThreadRandom random, Sink sink) {
        Key key = new Key(host.address(), config, transport);
        Subscriber sub = new Subscriber(host, sink);
        Loop loop;
        boolean started = false;
        HealthStatus adopted;
        synchronized (this) {
            loop = loops.get(key);
            if (loop == null) {
                loop = new Loop(key, probe, scheduler, random, host.health());
                loops.put(key, loop);
                started = true;
            }
            adopted = loop.add(sub);
        }
        if (started) {
            loop.start();
        } else if (adopted != null && adopted != host.health()) {
            HealthStatus from = host.health();
            host.health(adopted);
            sink.healthChanged(host, from, adopted, "shared health check of " + host.address());
        }
        Loop l = loop;
        return () -> leave(l, sub);
    }

    private void leave(Loop loop, Subscriber sub) {
        boolean stop;
        synchronized (this) {
            stop = loop.remove(sub) && loops.get(loop.key) == loop;
            if (stop) {
                loops.remove(loop.key);
            }
        }
        if (stop) {
            loop.stop();
        }
    }

    /** A host's membership in a loop. */
    @FunctionalInterface
    interface Subscription {
        void cancel();
    }

    private record Subscriber(Host host, Sink sink) {
    }

    /** The probing loop of one address and settings. */
    private static final class Loop {
        private final Key key;
        private final HealthCheckConfig config;
        private final HealthProbe probe;
        private final Scheduler scheduler;
        private final ThreadRandom random;
        private final HealthState state;
        private final List<Subscriber> subscribers = new ArrayList<>();
        private long attempt;
        private boolean inFlight;
        private boolean stopped;
        private Cancellable next = Cancellable.NOOP;
        private Cancellable timeout = Cancellable.NOOP;

        Loop(Key key, HealthProbe probe, Scheduler scheduler, ThreadRandom random, HealthStatus initial) {
            this.key = key;
            this.config = key.config();
            this.probe = probe;
            this.scheduler = scheduler;
            this.random = random;
            this.state = new HealthState(initial, config.healthyThreshold(), config.unhealthyThreshold());
        }

        /** Adds a subscriber; returns the loop's current status. */
        synchronized HealthStatus add(Subscriber s) {
            subscribers.add(s);
            return state.status();
        }

        /** Removes a subscriber; true if it was the last one. */
        synchronized boolean remove(Subscriber s) {
            subscribers.remove(s);
            return subscribers.isEmpty();
        }

        synchronized void start() {
            if (!stopped) {
                next = scheduler.schedule(this::run, config.initialDelay().toNanos());
            }
        }

        synchronized void stop() {
            stopped = true;
            next.cancel();
            timeout.cancel();
        }

        private long nextDelayNanos() {
            long jitter = config.intervalJitter().toNanos();
            long d = config.interval().toNanos();
            return jitter > 0 ? d + random.get().nextLong(jitter) : d;
        }

        private void run() {
            long id;
            Host target;
            synchronized (this) {
                if (stopped || subscribers.isEmpty()) {
                    return;
                }
                id = ++attempt;
                inFlight = true;
                target = subscribers.get(0).host();
                timeout = scheduler.schedule(
                        () -> complete(id, false, "timeout after " + DurationFormat.format(config.timeout())),
                        config.timeout().toNanos());
            }
            try {
                probe.probe(target, (success, reason) -> complete(id, success, reason));
            } catch (RuntimeException e) {
                complete(id, false, "probe failed: " + e);
            }
        }

        private void complete(long id, boolean success, String reason) {
            HealthStatus from;
            HealthStatus to;
            List<Subscriber> told;
            synchronized (this) {
                if (stopped || !inFlight || id != attempt) {
                    return; // late, duplicate, or after stop
                }
                inFlight = false;
                timeout.cancel();
                from = state.status();
                to = state.record(success);
                told = to == null ? List.of() : List.copyOf(subscribers);
                for (Subscriber s : told) {
                    s.host().health(to);
                }
                next = scheduler.schedule(this::run, nextDelayNanos());
            }
            String why = reason != null ? reason : (success ? "probe passed" : "probe failed");
            for (Subscriber s : told) {
                s.sink().healthChanged(s.host(), from, to, why);
            }
        }
    }
}
