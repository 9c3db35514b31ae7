package io.sluice.server.channel;

import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.sluice.core.time.Scheduler;
import io.sluice.core.time.Ticker;
import io.sluice.server.accesslog.AccessLog;
import io.sluice.server.metrics.ListenerMetrics;
import io.sluice.server.route.RouteTable;
import io.sluice.server.transport.EventLoopScheduler;

import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;
import java.util.function.Function;

/**
 * What every connection of one listener shares, whatever its protocol: the name, the route table
 * and protocol options (both swapped on reload, read per request), the metrics, the access log,
 * the drain flag and, per event loop, the {@link Scheduler} every connection timer of that loop
 * runs on (the loop itself in production, a manual scheduler with a fake ticker in tests). Each
 * protocol's context adds its upstream pools and whatever else its handlers need.
 *
 * @param <O> the protocol's options record
 */
public abstract class ListenerContext<O> implements RequestLog {

    private final String name;
    private final ListenerMetrics metrics;
    private final Function<EventExecutor, Scheduler> schedulerOf;
    private volatile RouteTable routes;
    private volatile O options;
    private volatile boolean draining;
    private volatile AccessLog accessLog;
    private volatile RequestLog tap;

    protected ListenerContext(String name, RouteTable routes, O options, ListenerMetrics metrics,
                              Function<EventExecutor, Scheduler> schedulerOf) {
        this.name = name;
        this.routes = routes;
        this.options = options;
        this.metrics = metrics;
        this.schedulerOf = schedulerOf;
    }

    /** One {@link EventLoopScheduler} per event loop of {@code workers}, on {@code ticker}. */
    protected static Map<EventExecutor, Scheduler> schedulers(EventLoopGroup workers, Ticker ticker) {
        Map<EventExecutor, Scheduler> s = new IdentityHashMap<>();
        for (EventExecutor e : workers) {
            s.put(e, new EventLoopScheduler(e, ticker));
        }
        return s;
    }

    public final String name() {
        return name;
    }

    public final ListenerMetrics metrics() {
        return metrics;
    }

    /** The scheduler (and through it the clock) of connections on {@code loop}. */
    public final Scheduler scheduler(EventExecutor loop) {
        return schedulerOf.apply(loop);
    }

    /** The current route table (a reload swaps it; a connection reads it per request). */
    public final RouteTable routes() {
        return routes;
    }

    /** The current protocol options. */
    public final O options() {
        return options;
    }

    /** Reload: new routes and options apply to the next request on every connection. */
    protected final void swap(RouteTable newRoutes, O newOptions) {
        this.routes = newRoutes;
        this.options = newOptions;
    }

    /** Sets the access log (null = none). */
    public final void accessLog(AccessLog log) {
        this.accessLog = log;
    }

    /** The access log, or null when it is off. */
    public final AccessLog accessLog() {
        return accessLog;
    }

    /**
     * A request ended: the one call every handler makes for it. Fans out to the metrics, the
     * access log when on, and the tap when set.
     */
    @Override
    public final void requestEnded(RequestEnd end) {
        metrics.requestEnded(end);
        AccessLog log = accessLog;
        if (log != null) {
            log.requestEnded(end);
        }
        RequestLog t = tap;
        if (t != null) {
            t.requestEnded(end);
        }
    }

    /**
     * One more observer of this listener's request ends (null: none), e.g. outlier detection;
     * handler tests use it to see every event.
     */
    public final void tap(RequestLog observer) {
        this.tap = observer;
    }

    /** True once {@link #startDraining} ran. */
    // ---- resilience: where retry back-offs take their jitter (tests fix it to prove timing exactly)
    private volatile DoubleSupplier retryJitter = () -> ThreadLocalRandom.current().nextDouble();

    /** A random number in [0, 1) for a retry's full-jitter back-off. */
    public final double retryJitter() {
        return retryJitter.getAsDouble();
    }

    /** Replaces the back-off jitter source (tests). */
    public final void retryJitter(DoubleSupplier source) {
        this.retryJitter = source;
    }

    public final boolean draining() {
        return draining;
    }

    /**
     * Shutdown (or a reload that moved the listener): from now on connections wind down, each in
     * its protocol's way; the gateway also fires a {@link DrainEvent} on every open connection.
     */
    public final void startDraining() {
        this.draining = true;
    }

    /** Closes the upstream connections of every loop (each on its own loop). */
    public abstract void closePools();

    /** Open (Bolt) or parked (HTTP) upstream connections across loops; a test and admin aid. */
    public abstract int upstreamConnections();
}
