package io.sluice.lb;

import io.sluice.core.time.Scheduler;

import java.util.Objects;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;

/**
 * What a {@link ClusterBalancer} needs from its surroundings: a scheduler (and its clock) for
 * health checks, ejection and slow start, a random source (seeded in tests), the number of initial
 * EDF pre-picks, the health-probe transport and a listener for state changes.
 *
 * @param scheduler time and scheduling (production: an event loop adapter; tests: a manual scheduler)
 * @param random    seeds pre-picks, probe jitter and the random/least-request policies; read only
 *                  inside {@link ClusterBalancer#create} (each balancer splits off its own generators)
 * @param prePicks  how many throw-away picks a fresh EDF scheduler makes, so that many gateways do not
 *                  all start on the same host ({@link PrePicks#RANDOM} by default, {@link PrePicks#NONE} in tests)
 * @param probes    creates the health probe of clusters that configure a health check; null = none available
 * @param listener  told about health changes, ejections, returns and panic mode (log lines and metrics)
 * @param healthChecks the probing loops shared by the balancers of one gateway (a host listed by several
 *                  clusters with the same health-check settings is probed once); null = a private hub per balancer
 */
public record LbContext(Scheduler scheduler, RandomGenerator random, PrePicks prePicks,
                        HealthProbe.Factory probes, ClusterBalancer.Listener listener, HealthCheckHub healthChecks) {

    public LbContext {
        Objects.requireNonNull(scheduler, "scheduler");
        Objects.requireNonNull(random, "random");
        prePicks = prePicks == null ? PrePicks.RANDOM : prePicks;
        listener = listener == null ? ClusterBalancer.Listener.NOOP : listener;
    }

    /** Random pre-picks, no probes, no listener. */
    public LbContext(Scheduler scheduler, RandomGenerator random) {
        this(scheduler, random, PrePicks.RANDOM, null, null, null);
    }

    /** Production convenience: an unseeded {@link SplittableRandom}, random pre-picks, no probes, no listener. */
    public static LbContext of(Scheduler scheduler) {
        return new LbContext(scheduler, new SplittableRandom());
    }

    public LbContext withPrePicks(PrePicks p) {
        return new LbContext(scheduler, random, p, probes, listener, healthChecks);
    }

    public LbContext withProbes(HealthProbe.Factory f) {
        return new LbContext(scheduler, random, prePicks, f, listener, healthChecks);
    }

    public LbContext withListener(ClusterBalancer.Listener l) {
        return new LbContext(scheduler, random, prePicks, probes, l, healthChecks);
    }

    /** Shares probing loops with every other balancer built with the same hub. */
    public LbContext withHealthChecks(HealthCheckHub hub) {
        return new LbContext(scheduler, random, prePicks, probes, listener, hub);
    }

    /** How many initial throw-away picks a freshly built scheduler makes. */
    @FunctionalInterface
    public interface PrePicks {

        /** Uniform in {@code [0, hosts)}, like MOSN. */
        PrePicks RANDOM = (hosts, random) -> hosts <= 1 ? 0 : random.nextInt(hosts);

        /** None: deterministic schedules (tests). */
        PrePicks NONE = (hosts, random) -> 0;

        /** Exactly {@code n} pre-picks. */
        static PrePicks fixed(int n) {
            if (n < 0) {
                throw new IllegalArgumentException("pre-picks must be >= 0: " + n);
            }
            return (hosts, random) -> n;
        }

        int count(int hosts, RandomGenerator random);
    }
}
