package io.sluice.server.admin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.GatewayConfig;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.policy.BreakerStatus;
import io.sluice.server.config.ConfigJson;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The admin API, after {@code HttpServerCodec} and {@code HttpObjectAggregator} on the admin
 * listener. Endpoints:
 * <ul>
 *   <li>{@code GET /metrics} — Prometheus text format</li>
 *   <li>{@code GET /ready} — 200 while serving, 503 while starting or draining (for load-balancer health checks)</li>
 *   <li>{@code GET /healthz} — 200 while the process is up (liveness), also while draining</li>
 *   <li>{@code GET /clusters} — JSON: every cluster, its policy and hosts (weight, health, ejection, in-flight)</li>
 *   <li>{@code GET /config} — the running config as native-format JSON</li>
 *   <li>{@code POST /reload} — re-read the config source and apply it: 200 with a one-line summary,
 *       400 with the config error (the old config keeps running), 409 when there is nothing to reload from</li>
 *   <li>{@code GET /} — a small HTML status page (listeners, clusters and hosts, last reload,
 *       uptime, version, links to the other endpoints); no scripts, no external assets</li>
 * </ul>
 * Every endpoint but {@code /reload} is read-only and answers only GET and HEAD.
 */
@ChannelHandler.Sharable
public final class AdminHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final String INDEX = """
            sluice admin
              GET  /metrics   Prometheus metrics
              GET  /ready     200 while serving, 503 while starting or draining
              GET  /healthz   200 while the process is up (liveness)
              GET  /clusters  clusters and hosts (JSON)
              GET  /config    the running config (JSON, native format)
              GET  /certs     TLS provider and loaded certificates (JSON)
              POST /reload    re-read the config file and apply it
            """;

    private final MeterRegistry registry;
    private final Supplier<Map<String, ClusterBalancer>> clusters;
    /** Per cluster, its discovery source's state for {@code /clusters} (null result = none). */
    private volatile Function<String, Map<String, Object>> discovery;
    /** discovery: what /ready still waits for at start (null = nothing), and a note for a ready answer (null = none). */
    private volatile Supplier<String> discoveryWaiting;
    private volatile Supplier<String> discoveryNote;
    private final BooleanSupplier ready;
    private final Supplier<GatewayConfig> config;
    private final Reloader reloader;
    private final Status status;
    /** TLS hook: {@code GET /certs} JSON and the status page's certificate table (null: none). */
    private Supplier<String> certsJson;
    private Supplier<String> certsHtml;

    /** What the status page shows besides the clusters. Called on the admin thread; must not block. */
    public interface Status {
        List<ListenerInfo> listeners();

        /** One line about the last reload (when, applied or rejected, what), or null if none yet. */
        String lastReload();

        long configVersion();

        /** Milliseconds since the gateway started serving. */
        long uptimeMillis();

        /** False when metrics recording is off ({@code admin.metrics: false}). */
        boolean metricsOn();

        /** A status read from these suppliers (each called on the admin thread; none may block). */
        static Status of(Supplier<List<ListenerInfo>> listeners, Supplier<String> lastReload, LongSupplier configVersion,
                         LongSupplier uptimeMillis, BooleanSupplier metricsOn) {
            return new Status() {
                @Override
                public List<ListenerInfo> listeners() {
                    return listeners.get();
                }

                @Override
                public String lastReload() {
                    return lastReload.get();
                }

                @Override
                public long configVersion() {
                    return configVersion.getAsLong();
                }

                @Override
                public long uptimeMillis() {
                    return uptimeMillis.getAsLong();
                }

                @Override
                public boolean metricsOn() {
                    return metricsOn.getAsBoolean();
                }
            };
        }
    }

    /** A listener as the status page shows it; {@code draining} for old sockets a reload moved or removed. */
    public record ListenerInfo(String name, String protocol, String address, int connections, int requests,
                               boolean draining) {
    }

    /** Re-reads the config source and applies it. */
    @FunctionalInterface
    public interface Reloader {
        /**
         * Blocking (reads a file); the handler calls it off the event loop.
         *
         * @return a one-line summary of what changed
         * @throws ConfigException       invalid config, the running one stays
         * @throws IllegalStateException the gateway cannot reload now
         */
        String reload();
    }

    /** Read-only admin API without {@code /config} content and without {@code /reload}. */
    public AdminHandler(MeterRegistry registry, Supplier<Map<String, ClusterBalancer>> clusters, BooleanSupplier ready) {
        this(registry, clusters, ready, null, null);
    }

    /**
     * @param config   the running config for {@code GET /config} (null: 404)
     * @param reloader what {@code POST /reload} runs (null: 409, nothing to reload from)
     */
    public AdminHandler(MeterRegistry registry, Supplier<Map<String, ClusterBalancer>> clusters, BooleanSupplier ready,
                        Supplier<GatewayConfig> config, Reloader reloader) {
        this(registry, clusters, ready, config, reloader, null);
    }

    /** @param status listeners, reload, uptime for the status page (null: the page shows clusters only) */
    public AdminHandler(MeterRegistry registry, Supplier<Map<String, ClusterBalancer>> clusters, BooleanSupplier ready,
                        Supplier<GatewayConfig> config, Reloader reloader, Status status) {
        this.status = status;
        this.registry = registry;
        this.clusters = clusters;
        this.ready = ready;
        this.config = config;
        this.reloader = reloader;
    }

    /** TLS hook: what {@code GET /certs} answers and the status page adds (each called on the admin thread). */
    public AdminHandler certs(Supplier<String> json, Supplier<String> html) {
        this.certsJson = json;
        this.certsHtml = html;
        return this;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (!req.decoderResult().isSuccess()) {
            send(ctx, req, HttpResponseStatus.BAD_REQUEST, "text/plain", "malformed request\n");
            return;
        }
        String path = new QueryStringDecoder(req.uri()).path();
        if (path.equals("/reload")) {
            if (!req.method().equals(HttpMethod.POST)) {
                send(ctx, req, HttpResponseStatus.METHOD_NOT_ALLOWED, "text/plain", "/reload changes state: use POST\n");
            } else {
                reload(ctx, req);
            }
            return;
        }
        if (!req.method().equals(HttpMethod.GET) && !req.method().equals(HttpMethod.HEAD)) {
            send(ctx, req, HttpResponseStatus.METHOD_NOT_ALLOWED, "text/plain", "this endpoint is read-only: use GET\n");
            return;
        }
        switch (path) {
            case "/", "" -> {
                String page = StatusPage.render(clusters.get(), status, ready.getAsBoolean());
                if (certsHtml != null) { // TLS hook
                    page = page.replace("</body>", certsHtml.get() + "</body>");
                }
                send(ctx, req, HttpResponseStatus.OK, "text/html; charset=utf-8", page);
            }
            case "/certs" -> send(ctx, req, HttpResponseStatus.OK, "application/json", // TLS hook
                    certsJson == null ? "{\"listeners\":[]}\n" : certsJson.get());
            case "/metrics" -> {
                if (status != null && !status.metricsOn()) {
                    send(ctx, req, HttpResponseStatus.NOT_FOUND, "text/plain",
                            "metrics are off (admin.metrics: false): nothing is recorded\n");
                } else if (registry instanceof PrometheusMeterRegistry p) {
                    send(ctx, req, HttpResponseStatus.OK, "text/plain; version=0.0.4; charset=utf-8", p.scrape());
                } else {
                    send(ctx, req, HttpResponseStatus.NOT_FOUND, "text/plain",
                            "metrics go to the embedding application's " + registry.getClass().getSimpleName() + "\n");
                }
            }
            case "/ready" -> {
                boolean ok = ready.getAsBoolean();
                // discovery: at start, wait (503) for each discovery cluster's first host list (bounded by initial_fetch_timeout)
                String waiting = ok && discoveryWaiting != null ? discoveryWaiting.get() : null;
                String note = ok && waiting == null && discoveryNote != null ? discoveryNote.get() : null;
                send(ctx, req, ok && waiting == null ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE,
                        "text/plain", waiting != null ? "starting: waiting for the first host list of " + waiting + "\n"
                                : ok ? (note == null ? "ready\n" : "ready; " + note + "\n") : "draining\n");
            }
            case "/healthz" -> send(ctx, req, HttpResponseStatus.OK, "text/plain", "ok\n");
            case "/clusters" -> send(ctx, req, HttpResponseStatus.OK, "application/json", clustersJson());
            case "/config" -> {
                if (config == null) {
                    send(ctx, req, HttpResponseStatus.NOT_FOUND, "text/plain", "no config to show\n");
                } else {
                    send(ctx, req, HttpResponseStatus.OK, "application/json", ConfigJson.render(config.get()) + "\n");
                }
            }
            default -> send(ctx, req, HttpResponseStatus.NOT_FOUND, "text/plain", "no admin endpoint " + path + "\n" + INDEX);
        }
    }

    /** Runs the reload on its own thread (it reads a file) and answers from there. */
    private void reload(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (reloader == null) {
            send(ctx, req, HttpResponseStatus.CONFLICT, "text/plain", "nothing to reload from: this gateway was not"
                    + " started from a config file (embedded use or demo mode); reload it with Gateway.reload(config)\n");
            return;
        }
        Thread t = new Thread(() -> {
            try {
                String summary = reloader.reload();
                send(ctx, req, HttpResponseStatus.OK, "text/plain", summary + "\n");
            } catch (ConfigException e) {
                send(ctx, req, HttpResponseStatus.BAD_REQUEST, "text/plain",
                        "config rejected, the running config stays: " + e.getMessage() + "\n");
            } catch (IllegalStateException e) {
                send(ctx, req, HttpResponseStatus.CONFLICT, "text/plain", e.getMessage() + "\n");
            } catch (RuntimeException e) {
                send(ctx, req, HttpResponseStatus.INTERNAL_SERVER_ERROR, "text/plain", "reload failed: " + e + "\n");
            }
        }, "sluice-admin-reload");
        t.setDaemon(true);
        t.start();
    }

    /** Adds each cluster's discovery state (source, connection state, digest) to {@code /clusters}. */
    public AdminHandler withDiscovery(Function<String, Map<String, Object>> status) {
        this.discovery = status;
        return this;
    }

    /** discovery: {@code /ready} answers 503 while {@code waiting} says what it waits for, then 200 with {@code note} if any. */
    public AdminHandler withDiscoveryReadiness(Supplier<String> waiting, Supplier<String> note) {
        this.discoveryWaiting = waiting;
        this.discoveryNote = note;
        return this;
    }

    private String clustersJson() {
        ObjectNode root = JSON.createObjectNode();
        ArrayNode list = root.putArray("clusters");
        for (ClusterBalancer c : clusters.get().values()) {
            ObjectNode cn = list.addObject();
            cn.put("name", c.name());
            cn.put("protocol", c.config().protocol().jsonName());
            cn.put("lb", c.config().lb().name().toLowerCase());
            cn.put("panic", c.panicking());
            BreakerStatus.json(cn, c); // resilience
            UpstreamH2Status.json(cn, registry, c.name()); // http2: upstream HTTP/2 connections
            Function<String, Map<String, Object>> d = discovery;
            Map<String, Object> disc = d == null ? null : d.apply(c.name());
            if (disc != null) {
                cn.set("discovery", JSON.valueToTree(disc));
            }
            ArrayNode hosts = cn.putArray("hosts");
            for (Host h : c.hosts()) {
                ObjectNode hn = hosts.addObject();
                hn.put("address", h.address());
                hn.put("source", h.origin());
                if (h.startMillis() > 0) {
                    hn.put("start_time_ms", h.startMillis());
                }
                hn.put("weight", h.weight());
                hn.put("health", h.health().name().toLowerCase());
                hn.put("ejected", h.ejected());
                hn.put("available", h.available());
                hn.put("active_requests", h.activeRequests());
                hn.put("effective_weight", Math.round(c.effectiveWeight(h) * 1000) / 1000.0);
                hn.put("warm_up_factor", Math.round(c.warmUpFactor(h) * 1000) / 1000.0);
                if (h.warmUp() != null) { // discovery: the provider's own warm-up (warmupTime / warmupWeight)
                    hn.put("warm_up_window_ms", h.warmUp().windowNanos() / 1_000_000);
                    hn.put("warm_up_weight", h.warmUp().weight());
                }
            }
        }
        try {
            return JSON.writeValueAsString(root) + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void send(ChannelHandlerContext ctx, FullHttpRequest req, HttpResponseStatus status, String type,
                             String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        boolean head = req.method().equals(HttpMethod.HEAD);
        ByteBuf content = head ? ctx.alloc().buffer(0) : ctx.alloc().buffer(bytes.length).writeBytes(bytes);
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, type).setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
        boolean keepAlive = HttpUtil.isKeepAlive(req);
        if (!keepAlive) {
            r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.writeAndFlush(r, ctx.voidPromise());
        }
    }
}
