package io.sluice.server;

import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.config.ConfigJson;
import io.sluice.server.metrics.GatewayMetrics;
import io.sluice.server.transport.Sockets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Objects;
import java.util.zip.CRC32;

/**
 * The reload sequence of a running gateway, and the running config it produces. A reload checks
 * what cannot change (the admin listener, the transport, a listener's protocol on a kept port),
 * binds new and moved listener sockets ({@link Listeners#stage}), updates the clusters, swaps the
 * listeners' route tables and options, then finishes the clusters (retired balancers close once no
 * route references them). Every result, applied or rejected, is counted, logged in one line and
 * kept for the status page.
 *
 * <p>Not synchronized: {@link Gateway} serializes reloads with start and shutdown on its own
 * monitor. The config and the last result are volatile for readers on other threads.
 */
final class Reloader {

    private static final Logger log = LoggerFactory.getLogger(Gateway.class); // the gateway's lines, as before

    private final ClusterRegistry clusters;
    private final Listeners listeners;
    private final GatewayMetrics metrics;
    private volatile GatewayConfig config;
    /** One line about the last reload (applied or rejected), for the status page; null before the first. */
    private volatile String lastReload;

    /** Starts at {@code running}, the config the parts were started with (config version 1). */
    Reloader(GatewayConfig running, ClusterRegistry clusters, Listeners listeners, GatewayMetrics metrics) {
        this.config = running;
        this.clusters = clusters;
        this.listeners = listeners;
        this.metrics = metrics;
        metrics.configHash(configHash(running));
    }

    GatewayConfig config() {
        return config;
    }

    String lastReload() {
        return lastReload;
    }

    /**
     * Applies {@code next} (see {@link Gateway#reload(GatewayConfig)}).
     *
     * @param trigger what asked for it ({@code SIGHUP}, {@code config file changed}), or null: the plain log line
     * @param source  what was read, e.g. the file name (with a trigger)
     * @throws ConfigException if {@code next} cannot be applied; nothing changed
     */
    ReloadResult apply(GatewayConfig next, String trigger, String source) {
        Objects.requireNonNull(next, "newConfig");
        Listeners.Staged staged;
        try {
            checkReloadable(next);
            clusters.upstreamTls().prepare(next.clusters()); // upstream TLS files read and checked before anything changes
            staged = listeners.stage(next.listeners());
        } catch (ConfigException e) {
            rejected(e, trigger, source);
            throw e;
        }
        GatewayConfig old = config;
        ClusterRegistry.Update clustersChanged = clusters.update(next.clusters());
        if (listeners.rateLimiter != null) {
            listeners.rateLimiter.update(next.rateLimit()); // before the route tables pick their rules
        }
        Listeners.Applied listenersChanged = listeners.apply(staged, next.listeners(), clustersChanged.clusters,
                next.drainTimeout());
        // no route references a retired balancer any more; in-flight requests keep their host and finish
        clustersChanged.finish();
        config = next;
        long version = metrics.version() + 1;
        metrics.reloaded(version, configHash(next));
        ReloadResult result = new ReloadResult(version, clustersChanged.added, clustersChanged.removed,
                clustersChanged.updated, listenersChanged.changed());
        StringBuilder extra = new StringBuilder();
        if (!listenersChanged.listening().isEmpty()) {
            extra.append("; listening on");
            listenersChanged.listening().forEach(l -> extra.append(' ').append(l));
        }
        if (!listenersChanged.removed().isEmpty()) {
            extra.append("; listeners removed ").append(listenersChanged.removed());
        }
        if (!old.drainTimeout().equals(next.drainTimeout())) {
            extra.append("; drain_timeout ").append(next.drainTimeout());
        }
        if (trigger == null) {
            log.info("config reloaded: {}{}", result.summary(), extra);
        } else {
            log.info("{}: reloaded {}: {}{}", trigger, source, result.summary(), extra);
        }
        lastReload = Instant.now() + " applied: " + result.summary() + extra;
        return result;
    }

    /** Counts, logs and remembers a rejected reload ({@code e} says why); the running config stays. */
    void rejected(ConfigException e, String trigger, String source) {
        metrics.reloadRejected();
        long version = metrics.version();
        if (trigger == null) {
            log.warn("config reload rejected, version {} keeps running: {}", version, e.getMessage());
        } else {
            log.warn("{}: invalid config {}, the running config stays (version {}): {}", trigger, source, version,
                    e.getMessage());
        }
        lastReload = Instant.now() + " rejected (version " + version + " keeps running): " + e.getMessage();
    }

    /**
     * What a reload cannot change: the admin listener, the transport, and the protocol of a
     * listener that keeps its address (the old socket holds the port while it drains).
     */
    private void checkReloadable(GatewayConfig next) {
        GatewayConfig cur = config;
        listeners.checkReloadable(next.listeners());
        if (!cur.admin().equals(next.admin())) {
            throw new ConfigException("$.admin", describe(next.admin()), "the running " + describe(cur.admin())
                    + " (changing the admin listener needs a restart)");
        }
        if (!cur.transport().equals(next.transport())) {
            throw new ConfigException("$.transport", describe(next.transport()), "the running " + describe(cur.transport())
                    + " (changing the transport needs a restart)");
        }
    }

    /** {@code admin on 127.0.0.1:34901}, {@code admin on 127.0.0.1:0 with metrics off}, {@code no admin listener}. */
    static String describe(AdminConfig a) {
        return !a.enabled() ? "no admin listener"
                : "admin on " + Sockets.hostPort(a.address(), a.port()) + (a.metrics() ? "" : " with metrics off");
    }

    /** {@code transport auto, worker threads 0 (one per core), backlog 1024, reuse_port off}. */
    static String describe(TransportConfig t) {
        return "transport " + t.type() + ", worker threads " + t.workerThreads() + (t.workerThreads() == 0 ? " (one per core)" : "")
                + ", backlog " + t.backlog() + ", reuse_port " + (t.reusePort() ? "on" : "off");
    }

    /** CRC-32 of the config as {@code GET /config} renders it: equal configs hash equal on every instance. */
    static int configHash(GatewayConfig c) {
        CRC32 crc = new CRC32();
        crc.update(ConfigJson.render(c).getBytes(StandardCharsets.UTF_8));
        return (int) crc.getValue();
    }
}
