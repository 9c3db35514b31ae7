package io.sluice.lb;

import io.sluice.core.cluster.HealthStatus;
import io.sluice.core.cluster.Host;
import io.sluice.core.cluster.Outcome;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.LbPolicy;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.discovery.DiscoveredHost;
import io.sluice.core.time.Cancellable;
import io.sluice.core.time.Scheduler;
import io.sluice.core.time.Ticker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.HashSet;
import java.util.Objects;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The load-balancing side of one cluster: its current host set, the picker (EDF with slow start,
 * round robin, random or least request), active health checks, passive outlier ejection and panic
 * mode; or consistent hashing ({@code ring_hash}, {@code maglev}) on a request key. One instance per cluster, shared by all event loops: {@link #pick()} is thread-safe, cheap
 * and allocation-free; state changes (checks, ejections, reloads) run on the context's scheduler or
 * the caller's thread and are reported to the {@link Listener}.
 *
 * <p>Picking: {@code weighted_round_robin} and weighted {@code least_request} use one
 * shared earliest-deadline-first scheduler whose weights are {@code clamp(weight, 1, 128)
 * [/ (active + 1) ^ bias] × slowStartFactor}, recomputed when a host is picked; when all weights are
 * equal and nothing warms up they fall back to plain round robin / power-of-two-choices. Unavailable
 * hosts (unhealthy or ejected) are skipped; when fewer than {@code panicThreshold}% of the hosts are
 * available, all hosts are used. A fresh scheduler is built at creation, on reload, when a host starts
 * warming while the cluster was unweighted, and when a warm-up window ends (so no stale slow-start
 * deadline survives it).
 *
 * <p>Slow start ({@code slow_start} in docs/config.md): a host's warm-up clock T0 starts when it turns healthy after being
 * unhealthy, when it returns from ejection, and when a reload adds its address; hosts present at
 * creation start warm unless {@link ClusterConfig#warmUpAtBoot()}.
 */
public final class ClusterBalancer implements AutoCloseable {

    /**
     * Told about state changes, for one log line and one metric each. Called on the scheduler's or
     * a probe's thread, sometimes while the balancer holds its lock: must be quick and must not call
     * back into {@link #update} or {@link #close}.
     */
    public interface Listener {

        /** Does nothing. */
        Listener NOOP = new Listener() {
        };

        /** Active health checking moved {@code host} from {@code from} to {@code to}. */
        default void onHealthChanged(String cluster, Host host, HealthStatus from, HealthStatus to, String reason) {
        }

        /** Outlier detection ejected {@code host} for {@code duration} (its {@code ejections}-th time). */
        default void onEjected(String cluster, Host host, Duration duration, int ejections, String reason) {
        }

        /** An ejected host came back (and starts warming up if slow start is on). */
        default void onReturned(String cluster, Host host) {
        }

        /** The cluster entered ({@code true}) or left panic mode (balancing over all hosts). */
        default void onPanic(String cluster, boolean panicking) {
        }
    }

    private final LbContext context;
    private final Scheduler scheduler;
    private final Ticker ticker;
    private final Listener listener;
    private final SplittableRandom buildRandom;
    private final ThreadRandom pickRandom;
    private final OutlierDetector outlier;
    private final HealthCheckHub healthChecks;
    private final AtomicBoolean panic = new AtomicBoolean();
    private final WarmUpGrid grid = new WarmUpGrid();
    /** The pending warm-up task (advances the grid, ends windows); NOOP while nothing warms up. Guarded by this. */
    private Cancellable warmUpTask = Cancellable.NOOP;
    private long warmUpTaskDue;

    private volatile ClusterConfig config;
    private volatile List<Host> hosts = List.of();
    private volatile Picker picker = new RoundRobinPicker(new Host[0], 0);
    private HealthChecker checker;
    private boolean closed;
    /** Route by registry: the cluster of each Bolt service, discovered on first use; null = a plain cluster. */
    private volatile java.util.function.Function<String, ClusterBalancer> children;
    /** True once a discovery source published hosts: reloads then keep the discovered set. Guarded by this. */
    private boolean discoveredOnce;
    /** Hosts that recently left the discovered set: address -> {T0 (or NOT_WARMING), time it left}. Guarded by this. */
    private final Map<String, long[]> departed = new HashMap<>();

    private ClusterBalancer(ClusterConfig config, LbContext context) {
        this.context = context;
        this.config = config;
        this.scheduler = context.scheduler();
        this.ticker = scheduler.ticker();
        this.listener = context.listener();
        this.buildRandom = new SplittableRandom(context.random().nextLong());
        this.pickRandom = new ThreadRandom(context.random().nextLong());
        this.healthChecks = context.healthChecks() != null ? context.healthChecks() : new HealthCheckHub();
        this.outlier = new OutlierDetector(null, scheduler, new OutlierDetector.Sink() {
            @Override
            public void ejected(Host host, long durationNanos, int ejections, String reason) {
                listener.onEjected(name(), host, Duration.ofNanos(durationNanos), ejections, reason);
                recomputePanic();
            }

            @Override
            public void returned(Host host) {
                listener.onReturned(name(), host);
                startWarmUp(host);
                recomputePanic();
            }
        });
    }

    /**
     * Builds the balancer for {@code config} and starts its health checks.
     *
     * @throws IllegalStateException if the cluster configures a health check and the context has no probe factory
     */
    public static ClusterBalancer create(ClusterConfig config, LbContext context) {
        ClusterBalancer b = new ClusterBalancer(config, context);
        synchronized (b) {
            List<Host> hosts = new ArrayList<>();
            long now = b.ticker.nanoTime();
            for (HostConfig h : config.hosts()) {
                Host host = new Host(h);
                if (config.warmUpAtBoot()) {
                    b.beginWarmUp(host, now, config.slowStart());
                }
                hosts.add(host);
            }
            b.install(config, List.copyOf(hosts));
        }
        return b;
    }

    public String name() {
        return config.name();
    }

    public ClusterConfig config() {
        return config;
    }

    /**
     * Makes this cluster a route-by-registry template: {@link #child} asks {@code resolver} for the
     * cluster of a service (it returns null while that cluster is being discovered).
     */
    public void children(java.util.function.Function<String, ClusterBalancer> resolver) {
        this.children = resolver;
    }

    /** True for a route-by-registry template (its requests go to {@link #child}). */
    public boolean routesByService() {
        return children != null;
    }

    /** The cluster discovered for {@code service}, or null (unknown yet, being discovered, or too many services). Non-blocking. */
    public ClusterBalancer child(String service) {
        java.util.function.Function<String, ClusterBalancer> c = children;
        return c == null || service == null ? null : c.apply(service);
    }

    /** The current host snapshot (immutable; replaced on reload). */
    public List<Host> hosts() {
        return hosts;
    }

    /**
     * Picks a host for one request, or returns {@code null} when no host can take it (503 / NO_PROCESSOR).
     * The caller counts the request on the host ({@link Host#requestStarted()} / {@link Host#requestFinished()})
     * and reports how it ended through {@link #onOutcome}.
     */
    public Host pick() {
        boolean p = panic.get();
        Host h = picker.pick(p);
        if (h == null && !p && !hosts.isEmpty() && recomputePanic()) {
            h = picker.pick(true);
        }
        return h;
    }

    /**
     * Like {@link #pick()} for a request with hash key {@code key} ({@link Hashing#hash}; {@link Hashing#NO_KEY}
     * = none): {@code ring_hash} and {@code maglev} clusters choose the host from the key, the other
     * policies ignore it.
     */
    public Host pick(long key) {
        if (key == Hashing.NO_KEY) {
            return pick();
        }
        boolean p = panic.get();
        Host h = picker.pick(p, key);
        if (h == null && !p && !hosts.isEmpty() && recomputePanic()) {
            h = picker.pick(true, key);
        }
        return h;
    }

    /** Reports how a request to {@code host} ended (feeds passive outlier detection). Thread-safe, lock-free unless it ejects. */
    public void onOutcome(Host host, Outcome outcome) {
        outlier.onOutcome(host, outcome);
    }

    /** True while fewer than {@code panicThreshold}% of the hosts are available and all hosts are used. */
    public boolean panicking() {
        return panic.get();
    }

    /** The slow-start factor of {@code host} now, in [minWeight, 1] (1 = not warming). */
    public double warmUpFactor(Host host) {
        SlowStartConfig ss = curve(config);
        return Weights.slowStartFactor(ss, host.warmUp(), host.warmStartNanos(), ticker.nanoTime());
    }

    /**
     * The weight the picker would give {@code host} now: {@code clamp(weight, 1, 128) × warm-up factor},
     * divided by {@code (active + 1) ^ bias} for {@code least_request}; 1 for {@code round_robin}.
     */
    public double effectiveWeight(Host host) {
        ClusterConfig c = config;
        if (c.lb() == LbPolicy.ROUND_ROBIN) {
            return 1.0;
        }
        double bias = c.lb() == LbPolicy.LEAST_REQUEST ? c.activeRequestBias() : 0;
        return Weights.effective(Weights.base(host), host, curve(c), bias, ticker.nanoTime());
    }

    /**
     * Applies a reloaded config in place: kept addresses keep their {@link Host} object, health,
     * ejection and warm-up clock (their weight is updated); new addresses start warming up; removed
     * ones stop being checked.
     */
    public synchronized void update(ClusterConfig newConfig) {
        if (closed) {
            throw new IllegalStateException("cluster " + name() + " is closed");
        }
        if (newConfig.discovered() && discoveredOnce) {
            // the hosts come from the discovery source, not from the config: keep them
            install(newConfig, hosts);
            if (warmUpTask != Cancellable.NOOP) {
                scheduleWarmUpTask(0);
            }
            return;
        }
        Map<String, Host> old = new HashMap<>();
        for (Host h : hosts) {
            old.put(h.address(), h);
        }
        long now = ticker.nanoTime();
        List<Host> fresh = new ArrayList<>();
        for (HostConfig hc : newConfig.hosts()) {
            Host kept = old.remove(hc.address());
            if (kept != null) {
                kept.weight(hc.weight());
                fresh.add(kept);
            } else {
                Host added = new Host(hc);
                beginWarmUp(added, now, newConfig.slowStart());
                fresh.add(added);
            }
        }
        install(newConfig, List.copyOf(fresh));
        if (warmUpTask != Cancellable.NOOP) {
            scheduleWarmUpTask(0); // the window may have shrunk, or slow start been switched off
        }
    }

    /**
     * Replaces the host set with the complete list a discovery source published ({@code HostSource}).
     * Addresses that stay keep their {@link Host} (health, ejection, in-flight counts) and take the new
     * weight. Warm-up T0 is the host's own start time when the source gives one ({@code startMillis},
     * converted from the wall clock {@code wallNowMillis} to this balancer's ticker), so every gateway
     * ramps a host on the same clock and a gateway restart does not re-warm a host that has been up for
     * long; a kept host whose start time changes (it restarted) warms up again. Without a start time,
     * T0 is now — unless the address left less than {@code discovery.flap_grace} ago, in which case it
     * resumes the warm-up clock it had. Hosts with weight 0 are left out (they get no traffic).
     *
     * <p>A host with its own warm-up ({@link DiscoveredHost#warmupMillis()}, SOFARPC {@code warmupTime})
     * warms over that window instead of the cluster's, starting at {@code warmupWeight / weight} (SOFARPC
     * {@code warmupWeight}; else the cluster's floor) and ramping on the cluster's curve — also when the
     * cluster configures no {@code slow_start} (aggression 1, floor 10 % then).
     *
     * @return the hosts now published
     */
    public synchronized List<Host> applyDiscovered(List<DiscoveredHost> discovered, long wallNowMillis) {
        if (closed) {
            return hosts;
        }
        ClusterConfig c = config;
        long now = ticker.nanoTime();
        long grace = c.discovery() != null ? c.discovery().flapGrace().toNanos() : 0;
        departed.values().removeIf(d -> now - d[1] > grace);
        SlowStartConfig ss = curve(c);
        Map<String, Host> old = new HashMap<>();
        for (Host h : hosts) {
            old.put(h.address(), h);
        }
        Set<String> seen = new HashSet<>();
        List<Host> fresh = new ArrayList<>();
        for (DiscoveredHost d : discovered) {
            if (d.weight() <= 0 || !seen.add(d.address())) {
                continue;
            }
            Host kept = old.remove(d.address());
            Host.WarmUp own = ownWarmUp(d);
            if (kept != null) {
                kept.weight(d.weight());
                boolean ownChanged = !Objects.equals(own, kept.warmUp());
                kept.warmUp(own);
                if (d.startMillis() != 0 && (d.startMillis() != kept.startMillis() || ownChanged)) {
                    stampWarmUp(kept, t0Of(d.startMillis(), wallNowMillis, now), now, ss);
                } else if (ownChanged && kept.warmStartNanos() != Host.NOT_WARMING) {
                    stampWarmUp(kept, kept.warmStartNanos(), now, ss);
                }
                kept.discovered(d.origin(), d.startMillis());
                fresh.add(kept);
                continue;
            }
            Host added = new Host(new HostConfig(d.host(), d.port(), d.weight()));
            added.discovered(d.origin(), d.startMillis());
            added.warmUp(own);
            long t0;
            if (d.startMillis() != 0) {
                t0 = t0Of(d.startMillis(), wallNowMillis, now);
            } else {
                long[] left = departed.remove(d.address());
                t0 = left != null ? left[0] : now;
            }
            stampWarmUp(added, t0, now, ss);
            fresh.add(added);
        }
        for (Host gone : old.values()) {
            departed.put(gone.address(), new long[] {gone.warmStartNanos(), now});
        }
        discoveredOnce = true;
        install(c, List.copyOf(fresh));
        if (warmUpTask != Cancellable.NOOP) {
            scheduleWarmUpTask(0);
        }
        return hosts;
    }

    /** The ticker time of a wall-clock start time; a start time in the future (clock skew) counts as now. */
    private static long t0Of(long startMillis, long wallNowMillis, long nowNanos) {
        long elapsedMillis = Math.max(0, wallNowMillis - startMillis);
        return nowNanos - Math.min(elapsedMillis, Long.MAX_VALUE / 4_000_000L) * 1_000_000L;
    }

    /** The host's own warm-up from its source (SOFARPC warmupTime / warmupWeight), or null. */
    private static Host.WarmUp ownWarmUp(DiscoveredHost d) {
        if (!d.ownWarmUp() || d.weight() <= 0) {
            return null;
        }
        double floor = d.warmupWeight() < 0 ? Double.NaN : Math.min(1.0, (double) d.warmupWeight() / d.weight());
        return new Host.WarmUp(Math.min(d.warmupMillis(), Long.MAX_VALUE / 4_000_000L) * 1_000_000L, floor,
                d.warmupWeight());
    }

    /** Sets T0 (or clears it when the window has passed or slow start is off) and schedules the warm-up task. */
    private void stampWarmUp(Host host, long t0, long now, SlowStartConfig ss) {
        long window = hostWindow(host);
        if (ss == null || window <= 0 || t0 == Host.NOT_WARMING || now - t0 >= window) {
            host.warmStartNanos(Host.NOT_WARMING);
            return;
        }
        host.warmStartNanos(t0);
        // an earlier due task is kept; a later one is brought forward (a short own window among long ones)
        scheduleWarmUpTask(Math.min(WarmUpGrid.stepNanos(window), window - (now - t0)));
    }

    /** Stops health checks and timers. Picking keeps working on the last snapshot. */
    @Override
    public synchronized void close() {
        closed = true;
        if (checker != null) {
            checker.close();
            checker = null;
        }
        outlier.close();
        warmUpTask.cancel();
        warmUpTask = Cancellable.NOOP;
    }

    /** How many times outlier detection has ejected {@code host}. */
    int ejections(Host host) {
        return outlier.ejections(host);
    }

    // ---------------------------------------------------------------------------------------------

    /** Publishes a config and host set; caller holds the lock. */
    private void install(ClusterConfig newConfig, List<Host> newHosts) {
        this.config = newConfig;
        this.hosts = newHosts;
        outlier.update(newConfig.outlier(), newHosts);
        installHealthChecker(newConfig, newHosts);
        rebuildPicker();
        recomputePanic();
    }

    private void installHealthChecker(ClusterConfig c, List<Host> newHosts) {
        if (c.healthCheck() == null) {
            if (checker != null) {
                checker.close();
                checker = null;
                for (Host h : newHosts) {
                    if (h.health() == HealthStatus.UNHEALTHY) {
                        h.health(HealthStatus.UNKNOWN);
                        listener.onHealthChanged(c.name(), h, HealthStatus.UNHEALTHY, HealthStatus.UNKNOWN,
                                "health check removed");
                    }
                }
            }
            return;
        }
        // a changed upstream TLS block changes how probes connect: a new checker (and probe) too
        if (checker == null || !checker.config().equals(c.healthCheck()) || !Objects.equals(checker.transport(), c.tls())) {
            if (context.probes() == null) {
                throw new IllegalStateException("cluster " + c.name() + " configures a health check ("
                        + c.healthCheck().probe() + ") but the LbContext has no HealthProbe.Factory");
            }
            HealthProbe probe = context.probes().create(c);
            if (checker != null) {
                checker.close();
            }
            checker = new HealthChecker(c.healthCheck(), c.tls(), probe, scheduler, pickRandom, healthChecks, this::healthChanged);
        }
        checker.hosts(newHosts);
    }

    private void healthChanged(Host host, HealthStatus from, HealthStatus to, String reason) {
        listener.onHealthChanged(name(), host, from, to, reason);
        if (from == HealthStatus.UNHEALTHY && to == HealthStatus.HEALTHY) {
            startWarmUp(host);
        }
        recomputePanic();
    }

    /** Starts (or restarts) the warm-up of a host of the current set, switching to a weighted picker if needed. */
    private synchronized void startWarmUp(Host host) {
        if (closed || !hosts.contains(host) || beginWarmUp(host, ticker.nanoTime(), config.slowStart()) == 0) {
            return;
        }
        if (!picker.weighted() && usesEdf(config.lb())) {
            rebuildPicker();
        }
    }

    /** Stamps T0 and makes sure the warm-up task runs; returns 0 if slow start is off. Caller holds the lock. */
    private long beginWarmUp(Host host, long now, SlowStartConfig ss) {
        if (ss == null || !ss.enabled()) {
            return 0;
        }
        host.warmStartNanos(now);
        if (warmUpTask == Cancellable.NOOP) {
            scheduleWarmUpTask(WarmUpGrid.stepNanos(ss.window().toNanos()));
        }
        return 1;
    }

    /** (Re)schedules the warm-up task {@code delay} from now unless it is due earlier already. Caller holds the lock. */
    private void scheduleWarmUpTask(long delay) {
        long due = ticker.nanoTime() + delay;
        if (closed || (warmUpTask != Cancellable.NOOP && warmUpTaskDue - due <= 0)) {
            return;
        }
        warmUpTask.cancel();
        warmUpTaskDue = due;
        warmUpTask = scheduler.schedule(this::warmUpTick, delay);
    }

    /**
     * The one periodic task of slow start, running while a host warms up: advances the grid (pickers
     * then re-evaluate warming weights), ends the warm-up of hosts whose window has passed (and
     * rebuilds the picker, so no stale slow-start deadline survives), and runs again after
     * one grid step or at the next window end, whichever is first.
     */
    private synchronized void warmUpTick() {
        warmUpTask = Cancellable.NOOP;
        if (closed) {
            return;
        }
        grid.advance();
        SlowStartConfig ss = curve(config);
        long now = ticker.nanoTime();
        long next = Long.MAX_VALUE;
        long step = Long.MAX_VALUE;
        boolean ended = false;
        for (Host h : hosts) {
            long t0 = h.warmStartNanos();
            if (t0 == Host.NOT_WARMING) {
                continue;
            }
            long window = hostWindow(h); // discovery: a host's own window, else the cluster's
            long left = window - (now - t0);
            if (left <= 0) {
                h.warmStartNanos(Host.NOT_WARMING);
                ended = true;
            } else {
                next = Math.min(next, left);
                step = Math.min(step, WarmUpGrid.stepNanos(window));
            }
        }
        if (ended && (usesEdf(config.lb()) || next == Long.MAX_VALUE)) {
            rebuildPicker(); // discovery: the last warm-up ended: pickers drop slow start
        }
        if (next != Long.MAX_VALUE) {
            scheduleWarmUpTask(Math.min(next, step));
        }
    }

    /** Chooses and builds the picker for the current snapshot; caller holds the lock. */
    private void rebuildPicker() {
        ClusterConfig c = config;
        Host[] arr = hosts.toArray(new Host[0]);
        double[] base = new double[arr.length];
        boolean equal = true;
        for (int i = 0; i < arr.length; i++) {
            base[i] = Weights.base(arr[i]);
            equal &= base[i] == base[0];
        }
        SlowStartConfig ss = enabledSlowStart(c);
        long now = ticker.nanoTime();
        if (ss == null && c.discovery() != null) {
            // discovery: the curve only while a host warms on its own window (else pickers skip slow start entirely)
            for (Host h : arr) {
                if (h.warmUp() != null && h.warmStartNanos() != Host.NOT_WARMING) {
                    ss = DISCOVERY_CURVE;
                    break;
                }
            }
        }
        boolean warming = false;
        for (Host h : arr) {
            warming |= Weights.warming(ss, h, now);
        }
        boolean edf = arr.length >= 2 && (!equal || warming);
        int pre = context.prePicks().count(arr.length, buildRandom);
        picker = switch (c.lb()) {
            case ROUND_ROBIN -> new RoundRobinPicker(arr, pre);
            case RANDOM -> new RandomPicker(arr, base, ss, ticker, pickRandom);
            case WEIGHTED_ROUND_ROBIN -> edf
                    ? new EdfPicker(arr, base, ss, 0, ticker, grid, pre)
                    : new RoundRobinPicker(arr, pre);
            case LEAST_REQUEST -> edf
                    ? new EdfPicker(arr, base, ss, c.activeRequestBias(), ticker, grid, pre)
                    : new LeastRequestPicker(arr, c.leastRequestChoices(), pickRandom);
            case RING_HASH -> new RingHashPicker(arr, base, c.hashLb(), ss, ticker, pickRandom);
            case MAGLEV -> new MaglevPicker(arr, base, c.hashLb().maglevTableSize(), ss, ticker, pickRandom);
        };
    }

    /** Re-evaluates panic mode, reporting an edge; returns the new state. */
    private boolean recomputePanic() {
        List<Host> hs = hosts;
        int available = 0;
        for (Host h : hs) {
            if (h.available()) {
                available++;
            }
        }
        boolean p = !hs.isEmpty() && available * 100L < (long) config.panicThreshold() * hs.size();
        if (panic.compareAndSet(!p, p)) {
            listener.onPanic(name(), p);
        }
        return p;
    }

    private static boolean usesEdf(LbPolicy policy) {
        return policy == LbPolicy.WEIGHTED_ROUND_ROBIN || policy == LbPolicy.LEAST_REQUEST;
    }

    private static SlowStartConfig enabledSlowStart(ClusterConfig c) {
        SlowStartConfig ss = c.slowStart();
        return ss != null && ss.enabled() ? ss : null;
    }

    /** discovery: the warm-up window of {@code h}: its own, else the cluster's slow_start window, 0 = none. */
    private long hostWindow(Host h) {
        Host.WarmUp own = h.warmUp();
        if (own != null) {
            return own.windowNanos();
        }
        SlowStartConfig ss = enabledSlowStart(config);
        return ss == null ? 0 : ss.window().toNanos();
    }

    /** discovery: the curve of hosts with their own warm-up when the cluster has no slow_start (its window is not used). */
    private static final SlowStartConfig DISCOVERY_CURVE = SlowStartConfig.of(Duration.ofSeconds(60));

    /**
     * The slow-start curve pickers use: the cluster's {@code slow_start}, or — for a discovery cluster
     * without one — aggression 1 / floor 10 % for hosts that bring their own warm-up window. Null = off.
     */
    private static SlowStartConfig curve(ClusterConfig c) {
        SlowStartConfig ss = enabledSlowStart(c);
        return ss != null || c.discovery() == null ? ss : DISCOVERY_CURVE;
    }
}
