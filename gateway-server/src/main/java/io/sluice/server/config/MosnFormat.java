package io.sluice.server.config;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.CircuitBreakerConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HeaderMatch;
import io.sluice.core.config.HealthCheckConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.LbPolicy;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.TlsConfig;
import io.sluice.core.config.PoolConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RetryPolicyConfig;
import io.sluice.core.config.RouteRules;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.config.StatusRange;
import io.sluice.core.config.StringMatch;
import io.sluice.core.config.TrafficPolicy;
import io.sluice.core.config.TransportConfig;
import io.sluice.core.config.UpstreamTlsConfig;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;

import static io.sluice.server.config.ConfigLoader.build;

/**
 * The subset of MOSN's {@code mosn_config.json} a HTTP/1.1 + Bolt proxy needs: servers →
 * routers (virtual hosts with domains, prefix/path/regex and header matches) and listeners
 * (a {@code proxy} filter with {@code downstream_protocol} and {@code router_config_name});
 * {@code cluster_manager.clusters} (hosts with weights, {@code lb_type}, {@code connect_timeout},
 * {@code health_check}, {@code slow_start}); {@code admin.address.socket_address}. MOSN-only
 * keys become warnings; keys that would change behaviour and are not supported are errors.
 */
final class MosnFormat {

    private MosnFormat() {
    }

    static GatewayConfig read(JsonObject root, List<String> warnings) {
        root.warnIgnored(warnings, "MOSN-only", "tracing", "metrics", "pprof", "plugin", "disable_upgrade",
                "inherit_old_mosnconfig", "close_graceful");
        for (String k : new String[] {"dynamic_resources", "static_resources", "third_part_codec", "extends",
                "wasm_global_plugins"}) {
            root.rejectUnless(k, EMPTY, "nothing here: xDS, codec and extension plugins are not supported by this gateway");
        }
        List<ClusterConfig> clusters = new ArrayList<>();
        JsonObject cm = root.object("cluster_manager");
        if (cm != null) {
            // upstream TLS: the cluster_manager's tls_context, for clusters with "cluster_manager_tls": true
            UpstreamTlsConfig cmTls = MosnTls.upstream(cm.object("tls_context"));
            cm.rejectUnless("auto_discovery", FALSE, "false: clusters come from this file only");
            cm.rejectUnless("clusters_configs", EMPTY, "nothing here: clusters come from this file only");
            cm.warnIgnored(warnings, "no service discovery", "registry_use_health_check");
            clusters.addAll(cm.array("clusters", (n, p) -> cluster(JsonObject.of(n, p), warnings, cmTls)));
            cm.finish();
        }
        Map<String, Protocol> clusterProtocols = new HashMap<>();
        List<ListenerConfig> listeners = new ArrayList<>();
        List<String> listenerPaths = new ArrayList<>();
        int workers = 0;
        Duration drain = null;
        List<JsonNode> servers = root.array("servers", (n, p) -> n);
        for (int s = 0; s < servers.size(); s++) {
            JsonObject server = JsonObject.of(servers.get(s), "$.servers[" + s + "]");
            server.warnIgnored(warnings, "MOSN process settings; Sluice logs through SLF4J", "default_log_path",
                    "default_log_level", "global_log_roller", "server_name", "use_netpoll_mode", "use_edge_mode",
                    "optimize_local_write");
            workers = Math.max(workers, server.integer("processor", 0));
            Duration graceful = server.duration("graceful_timeout", null);
            if (graceful != null && (drain == null || graceful.compareTo(drain) > 0)) {
                drain = graceful;
            }
            Map<String, List<RouteConfig>> routers = new HashMap<>();
            server.array("routers", (n, p) -> {
                JsonObject r = JsonObject.of(n, p);
                String name = r.requiredString("router_config_name");
                List<RouteConfig> routes = new ArrayList<>();
                for (List<RouteConfig> vh : r.array("virtual_hosts", (vn, vp) -> virtualHost(JsonObject.of(vn, vp), warnings))) {
                    routes.addAll(vh);
                }
                r.finish();
                routers.put(name, routes);
                return null;
            });
            List<ListenerConfig> ls = server.array("listeners", (n, p) -> {
                listenerPaths.add(p);
                return listener(JsonObject.of(n, p), routers, warnings);
            });
            listeners.addAll(ls);
            server.finish();
        }
        // a cluster's hosts speak what the listeners routing to it send upstream
        Map<String, String> firstRoutedFrom = new HashMap<>();
        for (int i = 0; i < listeners.size(); i++) {
            ListenerConfig l = listeners.get(i);
            for (RouteConfig r : l.routes()) {
                for (String used : r.clustersUsed()) { // the route's cluster, or its weighted clusters, and mirrors (none: answers by itself)
                    Protocol before = clusterProtocols.putIfAbsent(used, l.protocol());
                    firstRoutedFrom.putIfAbsent(used, listenerPaths.get(i));
                    if (before != null && before != l.protocol()) {
                        throw new ConfigException(listenerPaths.get(i) + ".filter_chains", used, "a cluster that listeners of one"
                                + " protocol route to (" + firstRoutedFrom.get(used) + " sends it "
                                + before.jsonName() + ", this listener " + l.protocol().jsonName() + ")");
                    }
                }
            }
        }
        List<ClusterConfig> typed = new ArrayList<>();
        for (ClusterConfig c : clusters) {
            Protocol p = clusterProtocols.getOrDefault(c.name(), Protocol.HTTP);
            typed.add(p == c.protocol() ? c : c.withProtocol(p));
        }
        AdminConfig admin = admin(root.object("admin"));
        root.finish();
        TransportConfig transport = new TransportConfig("auto", workers, TransportConfig.defaults().backlog());
        Duration drainTimeout = drain;
        return build("$", () -> new GatewayConfig(listeners, typed, admin, transport, drainTimeout));
    }

    /** Harmless values of keys that are otherwise not supported: an empty object, array or string. */
    private static final Predicate<JsonNode> EMPTY = v -> v.isContainerNode() ? v.size() == 0 : v.isTextual() && v.asText().isEmpty();
    private static final Predicate<JsonNode> FALSE = v -> v.isBoolean() && !v.asBoolean();
    /** A MOSN {@code tls_context} that turns TLS off ({@code "status": false}) or is empty. */
    private static final Predicate<JsonNode> NO_TLS = v -> EMPTY.test(v)
            || v.isObject() && v.path("status").isBoolean() && !v.path("status").asBoolean();

    private static List<RouteConfig> virtualHost(JsonObject vh, List<String> warnings) {
        String vhName = vh.string("name", null);
        List<String> domains = vh.strings("domains");
        List<String> hosts = domains.contains("*") ? List.of() : domains;
        vh.rejectUnless("require_tls", v -> v.isTextual() && (v.asText().isEmpty() || v.asText().equalsIgnoreCase("NONE")),
                "\"NONE\": TLS is not supported yet, so it cannot be required");
        for (String k : new String[] {"request_headers_to_add", "response_headers_to_add", "request_headers_to_remove",
                "response_headers_to_remove", "per_filter_config"}) {
            vh.rejectUnless(k, EMPTY, "nothing here: header manipulation and per-filter config are not supported");
        }
        List<RouteConfig> routes = vh.array("routers", (n, p) -> {
            JsonObject r = JsonObject.of(n, p);
            JsonObject m = r.object("match");
            StringMatch path = null;
            List<HeaderMatch> headers = List.of();
            if (m != null) {
                String prefix = m.string("prefix", null);
                String exact = m.string("path", null);
                String regex = m.string("regex", null);
                path = prefix != null ? StringMatch.prefix(prefix) : exact != null ? StringMatch.exact(exact)
                        : regex != null ? build(m.at("regex"), () -> StringMatch.regex(regex)) : null;
                headers = m.array("headers", (hn, hp) -> {
                    JsonObject h = JsonObject.of(hn, hp);
                    String name = h.requiredString("name");
                    String value = h.string("value", null);
                    boolean isRegex = h.bool("regex", false);
                    h.finish();
                    StringMatch v = value == null ? null : isRegex || value.equals(".*")
                            ? build(h.at("value"), () -> StringMatch.regex(value)) : StringMatch.exact(value);
                    return new HeaderMatch(name, v);
                });
                m.rejectUnless("variables", EMPTY, "nothing here: variable matches are not supported");
                m.rejectUnless("dsl_expressions", EMPTY, "nothing here: DSL matches are not supported");
                m.finish();
            }
            JsonObject route = r.object("route");
            boolean local = r.has("direct_response") || r.has("redirect");
            if (route == null && !local) {
                throw new ConfigException(r.at("route"), null, "an object with \"cluster_name\"");
            }
            RouteRules rules = MosnTraffic.read(r, route); // route rules: upgrades, header lists, redirect, direct response
            if (route == null) {
                route = JsonObject.of(com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode(), r.at("route"));
            }
            TrafficPolicy traffic = TrafficJson.mosnRoute(route, r); // weighted_clusters, hash_policy, request_mirror_policies
            boolean weighted = traffic != null && traffic.weightedClusters() != null;
            String cluster = weighted || local ? route.string("cluster_name", null) : route.requiredString("cluster_name");
            if (cluster != null && weighted) {
                if (!cluster.isEmpty()) {
                    throw new ConfigException(route.at("cluster_name"), cluster, "\"\" or nothing next to weighted_clusters");
                }
                cluster = null;
            }
            String rewrite = route.string("prefix_rewrite", null);
            Duration timeout = route.duration("timeout", null);
            RetryPolicyConfig retry = PolicyJson.mosnRetryPolicy(route.object("retry_policy"), warnings); // resilience
            route.rejectUnless("request_mirror_policies", EMPTY, "nothing here: MOSN reads request_mirror_policies on the"
                    + " router, next to \"match\" and \"route\"");
            for (String k : new String[] {"metadata_match", "cluster_header"}) {
                route.rejectUnless(k, EMPTY, "nothing here: not supported by this gateway");
            }
            route.finish();
            for (String k : new String[] {"per_filter_config"}) {
                r.rejectUnless(k, EMPTY, "nothing here: not supported by this gateway");
            }
            r.warnIgnored(warnings, "route metadata only serves subset load balancing, which is not supported", "metadata");
            r.finish();
            // a service-header route is a Bolt route too: service matches ride along in RouteMatch.service
            StringMatch service = null;
            List<HeaderMatch> rest = new ArrayList<>();
            for (HeaderMatch h : headers) {
                if (h.name().equals("service") && h.value() != null) {
                    service = h.value();
                } else {
                    rest.add(h);
                }
            }
            RouteMatch match = new RouteMatch(hosts, path, null, rest, service, null);
            String name = vhName == null ? null : vhName + "/" + p.substring(p.lastIndexOf('['));
            String target = cluster;
            return build(p, () -> new RouteConfig(name, match, target, rewrite, timeout, traffic, retry, rules));
        });
        vh.finish();
        return routes;
    }

    private static ListenerConfig listener(JsonObject o, Map<String, List<RouteConfig>> routers, List<String> warnings) {
        String name = o.requiredString("name");
        String address = o.requiredString("address");
        HostConfig bind = build(o.at("address"), () -> HostConfig.parse(address.replace("0.0.0.0:0", "0.0.0.0:1"), 1));
        int port = address.endsWith(":0") ? 0 : bind.port();
        o.rejectUnless("bind_port", v -> v.isBoolean() && v.asBoolean(), "true: the gateway binds every listener");
        o.rejectUnless("use_original_dst", FALSE, "false: original-destination listeners are not supported");
        o.rejectUnless("inspector", FALSE, "false: TLS detection with a plain-text fallback is an auto listener's"
                + " tls.allow_plaintext in the native format");
        o.rejectUnless("network", v -> v.isTextual() && (v.asText().isEmpty() || v.asText().equalsIgnoreCase("tcp")),
                "\"tcp\"");
        o.rejectUnless("stream_filters", EMPTY, "nothing here: stream filters are not supported (a filter such as"
                + " fault injection, authentication or rate limiting would silently not run)");
        o.rejectUnless("listener_filters", EMPTY, "nothing here: listener filters are not supported");
        o.warnIgnored(warnings, "MOSN labels and logs; see access_log in the native format", "type", "access_logs");
        Duration idle = o.duration("connection_idle_timeout", null);
        Protocol[] protocol = {Protocol.HTTP};
        String[] router = {null};
        JsonObject[] tlsChain = {null};
        o.array("filter_chains", (cn, cp) -> {
            JsonObject chain = JsonObject.of(cn, cp);
            chain.rejectUnless("match", EMPTY, "nothing here: filter-chain matching is not supported");
            tlsChain[0] = JsonObject.of(cn, cp); // tls_context(_set): read by MosnTls once the protocol is known
            chain.ignore("tls_context", "tls_context_set");
            chain.array("filters", (fn, fp) -> {
                JsonObject f = JsonObject.of(fn, fp);
                String type = f.requiredString("type");
                JsonObject cfg = f.object("config");
                f.finish();
                if (type.equals("connection_manager")) {
                    // old MOSN files name the router here too; anything else in it would be dropped
                    if (cfg != null) {
                        cfg.string("router_config_name", null);
                        cfg.finish();
                    }
                    return null;
                }
                if (!type.equals("proxy")) {
                    throw new ConfigException(f.at("type"), type, "\"proxy\" (other network filters are not supported)");
                }
                if (cfg == null) {
                    throw new ConfigException(f.at("config"), null, "the proxy filter's config");
                }
                String down = cfg.string("downstream_protocol", "Http1");
                protocol[0] = downstream(down);
                if (protocol[0] == null) {
                    throw new ConfigException(cfg.at("downstream_protocol"), down,
                            "\"Http1\", \"Http2\" or \"bolt\"");
                }
                Protocol down0 = protocol[0];
                cfg.rejectUnless("upstream_protocol", v -> v.isTextual() && downstream(v.asText()) == down0
                                && !"http2".equalsIgnoreCase(v.asText()), // HTTP/2 hook: no h2c upstreams yet
                        "the downstream_protocol's family, HTTP/1.1 upstreams for HTTP (an HTTP/2 upstream is not supported yet)");
                router[0] = cfg.string("router_config_name", null);
                cfg.rejectUnless("extend_config", v -> EMPTY.test(v) || v.isObject() && v.size() == 1
                        && downstream(v.path("sub_protocol").asText("")) == Protocol.BOLT, "{\"sub_protocol\": \"bolt\"} or nothing");
                cfg.rejectUnless("fallback_for_unknown_protocol", FALSE, "false");
                cfg.warnIgnored(warnings, "a label", "name");
                cfg.finish();
                return null;
            });
            chain.finish();
            return null;
        });
        o.finish();
        List<RouteConfig> routes = router[0] == null ? List.of() : routers.get(router[0]);
        if (routes == null) {
            throw new ConfigException(o.at("filter_chains"), router[0], "a router_config_name defined in this server's routers");
        }
        List<RouteConfig> forProtocol = new ArrayList<>();
        for (RouteConfig r : routes) {
            RouteMatch m = r.match();
            if (protocol[0] == Protocol.HTTP && m.service() != null) {
                // keep an HTTP listener's service-header routes as plain header matches
                List<HeaderMatch> hs = new ArrayList<>(m.headers());
                hs.add(new HeaderMatch("service", m.service()));
                forProtocol.add(new RouteConfig(r.name(), new RouteMatch(m.hosts(), m.path(), m.methods(), hs, null, null),
                        r.cluster(), r.prefixRewrite(), r.timeout(), r.traffic(), r.retryPolicy(), r.rules()));
            } else if (protocol[0] == Protocol.BOLT && r.rules() != null) {
                throw new ConfigException(o.at("filter_chains"), router[0], "a router without HTTP route rules (upgrade_configs,"
                        + " header lists, redirect, direct_response) for a bolt listener: route " + r.name() + " has some");
            } else if (protocol[0] == Protocol.BOLT) {
                // Bolt has no host or path: a MOSN "prefix /" catch-all becomes a match-all
                forProtocol.add(new RouteConfig(r.name(), new RouteMatch(null, null, null, m.headers(), m.service(), null),
                        r.cluster(), null, r.timeout(), r.traffic(), r.retryPolicy(), null));
            } else {
                forProtocol.add(r);
            }
        }
        HttpOptions http = idle == null ? HttpOptions.defaults() : HttpOptions.builder().idleTimeout(idle).build();
        BoltOptions bolt = idle == null ? BoltOptions.defaults() : BoltOptions.builder().idleTimeout(idle).build();
        TlsConfig tls = tlsChain[0] == null ? null : MosnListenerTls.read(tlsChain[0], protocol[0]);
        return build(o.path(), () -> new ListenerConfig(name, protocol[0], bind.host(), port, forProtocol, http, bolt,
                ListenerConfig.DEFAULT_MAX_CONNECTIONS, ListenerConfig.DEFAULT_MAX_CONNECTIONS_PER_CLIENT, tls));
    }

    /** A MOSN protocol name as this gateway's protocol, or null when it is not supported. */
    private static Protocol downstream(String name) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "http1", "auto", "http2" -> Protocol.HTTP; // HTTP listeners take h2c too
            case "bolt", "sofarpc", "x", "boltv2" -> Protocol.BOLT;
            default -> null;
        };
    }

    private static boolean allNoTls(JsonNode array) {
        for (JsonNode t : array) {
            if (!NO_TLS.test(t)) {
                return false;
            }
        }
        return true;
    }

    private static ClusterConfig cluster(JsonObject o, List<String> warnings, UpstreamTlsConfig cmTls) {
        String name = o.requiredString("name");
        UpstreamTlsConfig tls = clusterTls(o, cmTls); // upstream TLS, null = cleartext
        String type = o.string("type", "SIMPLE");
        if (!type.equalsIgnoreCase("SIMPLE")) {
            throw new ConfigException(o.at("type"), type, "\"SIMPLE\" (static hosts; DNS and original-destination clusters are not supported)");
        }
        LbPolicy lb = ConfigLoader.lb(o, "lb_type");
        List<HostConfig> hosts = o.array("hosts", (n, p) -> {
            JsonObject h = JsonObject.of(n, p);
            String address = h.requiredString("address");
            int weight = h.integer("weight", 1);
            h.warnIgnored(warnings, "host labels and metadata", "hostname", "metadata");
            // TLS is per cluster here: a host of a TLS cluster cannot opt out (it would silently get TLS)
            h.rejectUnless("tls_disable", v -> tls == null || v.isBoolean() && !v.asBoolean(),
                    "false: TLS is set per cluster; put this host in a cluster without tls_context");
            h.finish();
            return build(p, () -> HostConfig.parse(address, weight));
        });
        Duration connect = o.duration("connect_timeout", null);
        HealthCheckConfig hc = healthCheck(o.object("health_check"), warnings);
        SlowStartConfig ss = ConfigLoader.slowStart(o.object("slow_start"), true);
        JsonObject lbConfig = o.object("lbconfig");
        int choices = 2;
        double bias = 1.0;
        if (lbConfig != null) {
            choices = lbConfig.integer("choice_count", 2);
            bias = lbConfig.number("active_request_bias", 1.0);
            lbConfig.finish();
        }
        Duration idle = o.duration("idle_timeout", null);
        CircuitBreakerConfig breakers = PolicyJson.mosnCircuitBreakers(o.raw("circuit_breakers"), o.at("circuit_breakers"));
        o.rejectUnless("max_request_per_conn", v -> false, "no such limit: it is not supported yet and would not apply");
        o.rejectUnless("conn_buffer_limit_bytes", v -> false, "no such limit: buffering follows Netty's write"
                + " watermarks and backpressure; this limit is not supported and would not apply");
        o.rejectUnless("keepalive", EMPTY, "nothing here: upstream keepalive heartbeats are not configurable");
        for (String k : new String[] {"lb_subset_config", "spec", "original_dst_lb_config", "dns_resolvers",
                "dns_refresh_rate", "respect_dns_ttl", "connection_pool_mode"}) {
            o.rejectUnless(k, EMPTY, "nothing here: not supported by this gateway");
        }
        o.rejectUnless("cluster_pool_enable", FALSE, "false: not supported by this gateway");
        o.finish();
        PoolConfig pool = idle == null ? null : PoolConfig.builder().idleTimeout(idle).build();
        int ch = choices;
        double b = bias;
        // MOSN warms up every host present at boot (warm_up_at_boot); say so explicitly in the MOSN format
        return build(o.path(), () -> new ClusterConfig(name, Protocol.HTTP, lb, hosts, connect, null, pool, hc, ss, null,
                ClusterConfig.DEFAULT_PANIC_THRESHOLD, ss != null, ch, b, tls, null, null, breakers, null, null, null));
    }

    /** A cluster's own tls_context, or the cluster_manager's with "cluster_manager_tls": true (not both). */
    private static UpstreamTlsConfig clusterTls(JsonObject o, UpstreamTlsConfig cmTls) {
        UpstreamTlsConfig own = MosnTls.upstream(o.object("tls_context"));
        if (o.bool("cluster_manager_tls", false)) {
            if (cmTls == null) {
                throw new ConfigException(o.at("cluster_manager_tls"), true,
                        "false, or a cluster_manager.tls_context with \"status\": true to use");
            }
            if (own != null) {
                throw new ConfigException(o.at("tls_context"), "(enabled)", "no tls_context of its own with cluster_manager_tls");
            }
            return cmTls;
        }
        return own;
    }

    private static HealthCheckConfig healthCheck(JsonObject o, List<String> warnings) {
        if (o == null) {
            return null;
        }
        String protocol = o.string("protocol", "");
        o.warnIgnored(warnings, "labels and MOSN's health-check event log; transitions are logged and counted",
                "service_name", "event_log_path");
        HealthCheckConfig d = HealthCheckConfig.of(HealthCheckConfig.TCP);
        Duration timeout = o.duration("timeout", d.timeout());
        Duration interval = o.duration("interval", d.interval());
        Duration jitter = o.duration("interval_jitter", d.intervalJitter());
        Duration initial = o.duration("initial_delay_seconds", d.initialDelay());
        int healthy = o.integer("healthy_threshold", d.healthyThreshold());
        int unhealthy = o.integer("unhealthy_threshold", d.unhealthyThreshold());
        String path = null;
        String method = null;
        List<StatusRange> codes = null;
        JsonObject check = o.object("check_config");
        if (check != null) {
            JsonObject http = check.object("http_check_config");
            if (http != null) {
                path = http.string("path", null);
                method = http.string("method", null);
                codes = http.array("codes", (n, p) -> {
                    JsonObject c = JsonObject.of(n, p);
                    int start = c.integer("Start", 200);
                    int end = c.integer("End", start);
                    c.finish();
                    return build(p, () -> new StatusRange(start, end));
                });
                http.rejectUnless("timeout", v -> false, "no timeout here: the health_check's own timeout applies");
                http.rejectUnless("scheme", v -> v.isTextual() && v.asText().equalsIgnoreCase("http"), "\"http\"");
                http.rejectUnless("port", v -> false, "no port: the probe goes to the host's own port");
                http.finish();
            }
            check.finish();
        }
        o.rejectUnless("common_callbacks", EMPTY, "nothing here: health-check callbacks are not supported");
        o.finish();
        String probe = switch (protocol) {
            case "Http1" -> HealthCheckConfig.HTTP;
            case "bolt", "SofaRpc" -> HealthCheckConfig.BOLT;
            default -> HealthCheckConfig.TCP; // as in MOSN: anything else (even "http1") is a TCP dial
        };
        String p = path;
        String m = method;
        List<StatusRange> c = codes;
        return build(o.path(), () -> new HealthCheckConfig(probe, interval, timeout, jitter, initial, healthy, unhealthy,
                m, p, null, c));
    }

    private static AdminConfig admin(JsonObject o) {
        if (o == null) {
            return AdminConfig.defaults();
        }
        JsonObject addr = o.object("address");
        if (addr == null) {
            o.finish();
            return AdminConfig.defaults();
        }
        JsonObject sock = addr.object("socket_address");
        addr.finish();
        if (sock == null) {
            o.finish();
            return AdminConfig.defaults();
        }
        String host = sock.string("address", "127.0.0.1");
        int port = sock.integer("port_value", AdminConfig.DEFAULT_PORT);
        sock.finish();
        o.finish();
        return build(o.path(), () -> new AdminConfig(true, host, port));
    }
}
