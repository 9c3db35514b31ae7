package io.sluice.server.admin;

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
import io.sluice.lb.ClusterBalancer;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The admin API, after {@code HttpServerCodec} and {@code HttpObjectAggregator} on the admin
 * listener. Read-only endpoints:
 * <ul>
 *   <li>{@code GET /metrics} — Prometheus text format</li>
 *   <li>{@code GET /ready} — 200 while serving, 503 while draining (for load-balancer health checks)</li>
 *   <li>{@code GET /clusters} — JSON: every cluster, its policy and hosts (weight, health, ejection, in-flight)</li>
 *   <li>{@code GET /} — the list of endpoints</li>
 * </ul>
 */
@ChannelHandler.Sharable
public final class AdminHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final String INDEX = """
            sluice admin
              GET /metrics   Prometheus metrics
              GET /ready     200 while serving, 503 while draining
              GET /clusters  clusters and hosts (JSON)
            """;

    private final MeterRegistry registry;
    private final Supplier<Map<String, ClusterBalancer>> clusters;
    private final BooleanSupplier ready;

    public AdminHandler(MeterRegistry registry, Supplier<Map<String, ClusterBalancer>> clusters, BooleanSupplier ready) {
        this.registry = registry;
        this.clusters = clusters;
        this.ready = ready;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (!req.decoderResult().isSuccess()) {
            send(ctx, req, HttpResponseStatus.BAD_REQUEST, "text/plain", "malformed request\n");
            return;
        }
        if (!req.method().equals(HttpMethod.GET) && !req.method().equals(HttpMethod.HEAD)) {
            send(ctx, req, HttpResponseStatus.METHOD_NOT_ALLOWED, "text/plain", "the admin API is read-only: use GET\n");
            return;
        }
        String path = new QueryStringDecoder(req.uri()).path();
        switch (path) {
            case "/", "" -> send(ctx, req, HttpResponseStatus.OK, "text/plain", INDEX);
            case "/metrics" -> {
                if (registry instanceof PrometheusMeterRegistry p) {
                    send(ctx, req, HttpResponseStatus.OK, "text/plain; version=0.0.4; charset=utf-8", p.scrape());
                } else {
                    send(ctx, req, HttpResponseStatus.NOT_FOUND, "text/plain",
                            "metrics go to the embedding application's " + registry.getClass().getSimpleName() + "\n");
                }
            }
            case "/ready" -> {
                boolean ok = ready.getAsBoolean();
                send(ctx, req, ok ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE, "text/plain",
                        ok ? "ready\n" : "draining\n");
            }
            case "/clusters" -> send(ctx, req, HttpResponseStatus.OK, "application/json", clustersJson());
            default -> send(ctx, req, HttpResponseStatus.NOT_FOUND, "text/plain", "no admin endpoint " + path + "\n" + INDEX);
        }
    }

    private String clustersJson() {
        ObjectNode root = JSON.createObjectNode();
        ArrayNode list = root.putArray("clusters");
        for (ClusterBalancer c : clusters.get().values()) {
            ObjectNode cn = list.addObject();
            cn.put("name", c.name());
            cn.put("protocol", c.config().protocol().name().toLowerCase());
            cn.put("lb", c.config().lb().name().toLowerCase());
            cn.put("panic", c.panicking());
            ArrayNode hosts = cn.putArray("hosts");
            for (Host h : c.hosts()) {
                ObjectNode hn = hosts.addObject();
                hn.put("address", h.address());
                hn.put("weight", h.weight());
                hn.put("health", h.health().name().toLowerCase());
                hn.put("ejected", h.ejected());
                hn.put("available", h.available());
                hn.put("active_requests", h.activeRequests());
                hn.put("effective_weight", Math.round(c.effectiveWeight(h) * 1000) / 1000.0);
                hn.put("warm_up_factor", Math.round(c.warmUpFactor(h) * 1000) / 1000.0);
            }
        }
        try {
            return JSON.writeValueAsString(root) + "\n";
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
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
