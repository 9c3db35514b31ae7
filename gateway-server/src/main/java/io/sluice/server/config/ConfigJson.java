package io.sluice.server.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.core.config.AccessLogConfig;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.config.DurationFormat;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HeaderMatch;
import io.sluice.core.config.HealthCheckConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.OutlierConfig;
import io.sluice.core.config.PoolConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.config.StatusRange;
import io.sluice.core.config.StringMatch;
import io.sluice.core.config.TransportConfig;

import java.time.Duration;
import java.util.Locale;

/**
 * Renders a {@link GatewayConfig} in the native file format ({@code docs/config.md}), every value
 * explicit (defaults filled in), durations as {@code "5s"} strings. The output loads back with
 * {@link ConfigLoader#parse} into an equal config, whatever format the original file was in.
 * The config holds one secret today, a Nacos discovery password (rendered as {@code "***"} by NacosJson);
 * a future secret field must be redacted here too.
 */
public final class ConfigJson {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private ConfigJson() {
    }

    /** The config as indented JSON text. */
    public static String render(GatewayConfig c) {
        try {
            return JSON.writeValueAsString(tree(c));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The config as a Jackson tree. */
    public static ObjectNode tree(GatewayConfig c) {
        ObjectNode root = JSON.createObjectNode();
        ArrayNode listeners = root.putArray("listeners");
        for (ListenerConfig l : c.listeners()) {
            listener(listeners.addObject(), l);
        }
        ArrayNode clusters = root.putArray("clusters");
        for (ClusterConfig cl : c.clusters()) {
            cluster(clusters.addObject(), cl);
        }
        AdminConfig a = c.admin();
        root.putObject("admin").put("enabled", a.enabled()).put("address", a.address()).put("port", a.port()).put("metrics", a.metrics());
        TransportConfig t = c.transport();
        root.putObject("transport").put("type", t.type()).put("worker_threads", t.workerThreads()).put("backlog", t.backlog())
                .put("reuse_port", t.reusePort());
        root.put("drain_timeout", d(c.drainTimeout()));
        AccessLogConfig al = c.accessLog();
        root.putObject("access_log").put("enabled", al.enabled()).put("path", al.path()).put("format", al.format())
                .put("queue_size", al.queueSize());
        root.putObject("watch_config").put("enabled", c.watchConfig().enabled()).put("interval", d(c.watchConfig().interval()));
        RateLimitJson.render(root, c.rateLimit()); // only when configured
        return root;
    }

    private static void listener(ObjectNode o, ListenerConfig l) {
        o.put("name", l.name()).put("protocol", l.protocol().jsonName()).put("address", l.address()).put("port", l.port())
                .put("max_connections", l.maxConnections()).put("max_connections_per_client", l.maxConnectionsPerClient());
        if (l.tls() != null) {
            TlsConfigReader.render(o.putObject("tls"), l.tls());
        }
        ArrayNode routes = o.putArray("routes");
        for (RouteConfig r : l.routes()) {
            route(routes.addObject(), r);
        }
        if (l.protocol() != Protocol.BOLT) {
            HttpOptions h = l.http();
            ObjectNode hn = o.putObject("http").put("max_initial_line_length", h.maxInitialLineLength())
                    .put("max_header_size", h.maxHeaderSize()).put("max_request_body", h.maxRequestBodyBytes())
                    .put("idle_timeout", d(h.idleTimeout())).put("request_header_timeout", d(h.requestHeaderTimeout()))
                    .put("preserve_host", h.preserveHost()).put("x_forwarded", h.xForwarded())
                    .put("request_body_timeout", d(h.requestBodyTimeout())).put("write_timeout", d(h.writeTimeout()))
                    .put("drain_grace", d(h.drainGrace()))
                    .put("max_response_header_size", h.maxResponseHeaderSize()).put("min_request_body_rate", h.minRequestBodyRate());
            ArrayNode trusted = hn.putArray("trusted_proxies");
            h.trustedProxies().forEach(r -> trusted.add(r.toString()));
            hn.putObject("path").put("escaped_slashes", h.path().escapedSlashes().jsonName())
                    .put("merge_slashes", h.path().mergeSlashes());
            if (h.tracing() != null) { // traffic
                hn.putObject("tracing").put("request_id", h.tracing().requestId())
                        .put("echo_request_id", h.tracing().echoRequestId()).put("traceparent", h.tracing().traceparent());
            }
        }
        if (l.protocol() != Protocol.HTTP) {
            BoltOptions b = l.bolt();
            ObjectNode bn = o.putObject("bolt").put("max_frame_length", b.maxFrameLength())
                    .put("idle_timeout", d(b.idleTimeout())).put("max_in_flight_per_connection", b.maxInFlight());
            if (b.defaultCluster() != null) {
                bn.put("default_cluster", b.defaultCluster());
            }
        }
    }

    private static void route(ObjectNode o, RouteConfig r) {
        if (r.name() != null) {
            o.put("name", r.name());
        }
        RouteMatch m = r.match();
        if (!m.equals(RouteMatch.ANY)) {
            ObjectNode mn = o.putObject("match");
            if (!m.hosts().isEmpty()) {
                m.hosts().forEach(mn.putArray("hosts")::add);
            }
            if (m.path() != null) {
                match(mn.putObject("path"), m.path());
            }
            if (!m.methods().isEmpty()) {
                m.methods().forEach(mn.putArray("methods")::add);
            }
            if (!m.headers().isEmpty()) {
                ArrayNode hs = mn.putArray("headers");
                for (HeaderMatch h : m.headers()) {
                    ObjectNode hn = hs.addObject().put("name", h.name());
                    if (h.value() == null) {
                        hn.put("present", true);
                    } else {
                        match(hn, h.value());
                    }
                }
            }
            if (m.service() != null) {
                match(mn.putObject("service"), m.service());
            }
            if (m.rpcMethod() != null) {
                match(mn.putObject("method"), m.rpcMethod());
            }
        }
        if (r.cluster() != null && (r.traffic() == null || r.traffic().weightedClusters() == null)) {
            o.put("cluster", r.cluster()); // none on a route answering by itself, nor with weighted clusters
        }
        TrafficJson.render(o, r.traffic()); // weighted_clusters, hash_policy, mirrors
        RouteRulesJson.write(o, r.rules()); // route rules: upgrades, header rules, rewrites, local answers
        if (r.prefixRewrite() != null) {
            o.put("prefix_rewrite", r.prefixRewrite());
        }
        if (r.timeout() != null) {
            o.put("timeout", d(r.timeout()));
        }
        PolicyJson.render(o, r.retryPolicy()); // resilience
    }

    private static void match(ObjectNode o, StringMatch m) {
        o.put(m.kind().name().toLowerCase(Locale.ROOT), m.value());
    }

    private static void cluster(ObjectNode o, ClusterConfig c) {
        o.put("name", c.name()).put("protocol", c.protocol().jsonName()).put("lb", c.lb().jsonName());
        ArrayNode hosts = o.putArray("hosts");
        for (HostConfig h : c.hosts()) {
            hosts.addObject().put("address", h.address()).put("weight", h.weight());
        }
        o.put("connect_timeout", d(c.connectTimeout())).put("response_timeout", d(c.responseTimeout()));
        PoolConfig p = c.pool();
        o.putObject("pool").put("max_idle_per_host", p.maxIdlePerHost()).put("idle_timeout", d(p.idleTimeout()))
                .put("bolt_connections_per_host", p.boltConnectionsPerHost());
        HealthCheckConfig hc = c.healthCheck();
        if (hc != null) {
            ObjectNode hn = o.putObject("health_check").put("probe", hc.probe()).put("interval", d(hc.interval()))
                    .put("timeout", d(hc.timeout())).put("interval_jitter", d(hc.intervalJitter()))
                    .put("initial_delay", d(hc.initialDelay())).put("healthy_threshold", hc.healthyThreshold())
                    .put("unhealthy_threshold", hc.unhealthyThreshold());
            ObjectNode http = hn.putObject("http").put("method", hc.httpMethod()).put("path", hc.httpPath());
            if (hc.httpHost() != null) {
                http.put("host", hc.httpHost());
            }
            ArrayNode st = http.putArray("expected_statuses");
            for (StatusRange r : hc.expectedStatuses()) {
                st.add(r.from() == r.to() ? String.valueOf(r.from()) : r.from() + "-" + r.to());
            }
        }
        SlowStartConfig ss = c.slowStart();
        if (ss != null) {
            o.putObject("slow_start").put("window", d(ss.window())).put("aggression", ss.aggression())
                    .put("min_weight_percent", ss.minWeight() * 100);
        }
        OutlierConfig out = c.outlier();
        if (out != null) {
            o.putObject("outlier").put("consecutive_failures", out.consecutiveFailures()).put("count_5xx", out.count5xx())
                    .put("base_ejection_time", d(out.baseEjectionTime())).put("max_ejection_time", d(out.maxEjectionTime()))
                    .put("max_ejection_percent", out.maxEjectionPercent()).put("ejection_decay", d(out.ejectionDecay()));
        }
        o.put("panic_threshold", c.panicThreshold()).put("warm_up_at_boot", c.warmUpAtBoot())
                .put("least_request_choices", c.leastRequestChoices()).put("active_request_bias", c.activeRequestBias());
        TrafficJson.render(o, c.hashLb()); // ring_hash, maglev
        if (c.upstreamProtocol() != io.sluice.core.config.UpstreamProtocol.HTTP1) { // http2
            o.put("upstream_protocol", c.upstreamProtocol().jsonName());
        }
        if (!c.http2().equals(io.sluice.core.config.UpstreamHttp2Config.defaults())) { // http2: PING keep-alive
            o.putObject("http2").put("ping_interval", d(c.http2().pingInterval())).put("ping_timeout", d(c.http2().pingTimeout()));
        }
        PolicyJson.render(o, c.retryPolicy()); // resilience
        PolicyJson.render(o, c.circuitBreakers());
        DiscoveryConfig dc = c.discovery();
        if (dc != null) {
            ObjectNode dn = o.putObject("discovery").put("type", dc.type());
            if (dc.address() != null) {
                dn.put("address", dc.address());
            }
            if (dc.service() != null) {
                dn.put("service", dc.service());
            }
            if (dc.source() != null) {
                dn.put("source", dc.source());
            }
            dn.put("protocol", dc.protocol()).put("session_timeout", d(dc.sessionTimeout()))
                    .put("connection_timeout", d(dc.connectionTimeout())).put("allow_empty", dc.allowEmpty())
                    .put("flap_grace", d(dc.flapGrace())).put("refresh_min", d(dc.refreshMin()))
                    .put("refresh_max", d(dc.refreshMax())).put("max_services", dc.maxServices())
                    .put("idle_timeout", d(dc.idleTimeout()))
                    .put("initial_fetch_timeout", d(dc.initialFetchTimeout())); // discovery
            if (dc.dnsServer() != null) {
                dn.put("dns_server", dc.dnsServer());
            }
            NacosJson.write(dn, dc.nacos()); // nacos discovery (the password is redacted)
        }
        if (c.headers() != null) { // route rules: the cluster's header rules
            RouteRulesJson.writeRules(o, "request_headers", c.headers().request());
            RouteRulesJson.writeRules(o, "response_headers", c.headers().response());
        }
    }

    private static String d(Duration d) {
        return DurationFormat.format(d);
    }
}
