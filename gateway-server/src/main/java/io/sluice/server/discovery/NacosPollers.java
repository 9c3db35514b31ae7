package io.sluice.server.discovery;

import io.sluice.core.time.Cancellable;
import io.sluice.core.time.Scheduler;
import io.sluice.core.time.Ticker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What every Nacos source of one gateway shares: two daemon poll threads ({@code sluice-nacos-N}) and
 * one JDK {@link HttpClient} per connect timeout (each client has a selector thread of its own). A
 * gateway following a thousand Nacos services (route by registry) thus keeps two poll threads, not a
 * thousand; polls block on HTTP, so they never run on an event loop. Created on the first Nacos source,
 * closed with the {@link DiscoveryHub}.
 */
final class NacosPollers implements Scheduler, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(NacosPollers.class);
    /** Poll threads: two, so that one server that stalls until its timeout does not hold every poll. */
    static final int THREADS = 2;

    private final ScheduledThreadPoolExecutor executor;
    private final Map<Duration, HttpClient> clients = new ConcurrentHashMap<>();

    NacosPollers() {
        AtomicInteger n = new AtomicInteger();
        executor = new ScheduledThreadPoolExecutor(THREADS, r -> {
            Thread t = new Thread(r, "sluice-nacos-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
    }

    /** The shared client for a connect timeout. */
    HttpClient client(Duration connectTimeout) {
        return clients.computeIfAbsent(connectTimeout,
                t -> HttpClient.newBuilder().connectTimeout(t).version(HttpClient.Version.HTTP_1_1).build());
    }

    @Override
    public Ticker ticker() {
        return Ticker.system();
    }

    @Override
    public Cancellable schedule(Runnable task, long delayNanos) {
        ScheduledFuture<?> f = executor.schedule(() -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                log.warn("discovery: nacos poll failed", e);
            }
        }, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        return () -> f.cancel(false);
    }

    @Override
    public void close() {
        executor.shutdownNow();
        clients.clear();
    }
}
