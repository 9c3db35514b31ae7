package io.sluice.server.config;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HeaderMatch;
import io.sluice.core.config.HealthCheckConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.LbPolicy;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.config.StatusRange;
import io.sluice.core.config.StringMatch;
import io.sluice.core.config.TransportConfig;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

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
        root.ignore("disable_upgrade", "tracing", "metrics", "pprof", "close_graceful", "inherit_old_mosnconfig",
                "dynamic_resources", "static_resources", "plugin", "third_part_codec", "extends", "wasm_global_plugins");
        warnIgnored(root, warnings, "tracing", "metrics", "pprof", "dynamic_resources", "static_resources", "plugin",
                "third_part_codec", "extends", "wasm_global_plugins");
        List<ClusterConfig> clusters = new ArrayList<>();
        JsonObject cm = root.object("cluster_manager");
        if (cm != null) {
            cm.ignore("tls_context", "auto_discovery", "registry_use_health_check", "clusters_configs");
            clusters.addAll(cm.array("clusters", (n, p) -> cluster(JsonObject.of(n, p), warnings)));
            cm.finish();
        }
        Map<String, Protocol> clusterProtocols = new HashMap<>();
        List<ListenerConfig> listeners = new ArrayList<>();
        List<String> listenerPaths = new ArrayList<>();
        int workers = 0;
        List<JsonNode> servers = root.array("servers", (n, p) -> n);
        for (int s = 0; s < servers.size(); s++) {
            JsonObject server = JsonObject.of(servers.get(s), "$.servers[" + s + "]");
            server.ignore("default_log_path", "default_log_level", "global_log_roller", "graceful_timeout", "server_name",
                    "use_netpoll_mode", "use_edge_mode", "optimize_local_write");
            workers = Math.max(workers, server.integer("processor", 0));
            Map<String, List<RouteConfig>> routers = new HashMap<>();
            server.array("routers", (n, p) -> {
                JsonObject r = JsonObject.of(n, p);
                String name = r.requiredString("router_config_name");
                List<RouteConfig> routes = new ArrayList<>();
                for (List<RouteConfig> vh : r.array("virtual_hosts", (vn, vp) -> virtualHost(JsonObject.of(vn, vp)))) {
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
                Protocol before = clusterProtocols.putIfAbsent(r.cluster(), l.protocol());
                firstRoutedFrom.putIfAbsent(r.cluster(), listenerPaths.get(i));
                if (before != null && before != l.protocol()) {
                    throw new ConfigException(listenerPaths.get(i) + ".filter_chains", r.cluster(), "a cluster that listeners of one"
                            + " protocol route to (" + firstRoutedFrom.get(r.cluster()) + " sends it "
                            + before.jsonName() + ", this listener " + l.protocol().jsonName() + ")");
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
        return build("$", () -> new GatewayConfig(listeners, typed, admin, transport, null));
    }

    private static void warnIgnored(JsonObject o, List<String> warnings, String... keys) {
        for (String k : keys) {
            if (o.raw(k) != null) {
                warnings.add(o.at(k) + " is MOSN-only and ignored");
            }
        }
    }

    private static List<RouteConfig> virtualHost(JsonObject vh) {
        String vhName = vh.string("name", null);
        List<String> domains = vh.strings("domains");
        List<String> hosts = domains.contains("*") ? List.of() : domains;
        vh.ignore("require_tls", "request_headers_to_add", "response_headers_to_add", "request_headers_to_remove",
                "response_headers_to_remove", "per_filter_config");
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
                m.ignore("variables", "dsl_expressions");
                m.finish();
            }
            JsonObject route = r.object("route");
            if (route == null) {
                throw new ConfigException(r.at("route"), null, "an object with \"cluster_name\"");
            }
            String cluster = route.requiredString("cluster_name");
            String rewrite = route.string("prefix_rewrite", null);
            Duration timeout = route.duration("timeout", null);
            route.ignore("retry_policy", "metadata_match", "hash_policy", "request_mirror_policies", "host_rewrite",
                    "auto_host_rewrite", "weighted_clusters", "cluster_header", "upgrade_configs");
            route.finish();
            r.ignore("per_filter_config", "request_headers_to_add", "response_headers_to_add", "direct_response",
                    "redirect", "metadata");
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
            return build(p, () -> new RouteConfig(name, match, cluster, rewrite, timeout));
        });
        vh.finish();
        return routes;
    }

    private static ListenerConfig listener(JsonObject o, Map<String, List<RouteConfig>> routers, List<String> warnings) {
        String name = o.requiredString("name");
        String address = o.requiredString("address");
        HostConfig bind = build(o.at("address"), () -> HostConfig.parse(address.replace("0.0.0.0:0", "0.0.0.0:1"), 1));
        int port = address.endsWith(":0") ? 0 : bind.port();
        o.ignore("bind_port", "type", "access_logs", "use_original_dst", "inspector", "connection_idle_timeout",
                "stream_filters", "listener_filters", "network");
        if (o.raw("stream_filters") != null) {
            warnings.add(o.at("stream_filters") + " is MOSN-only and ignored");
        }
        Protocol[] protocol = {Protocol.HTTP};
        String[] router = {null};
        o.array("filter_chains", (cn, cp) -> {
            JsonObject chain = JsonObject.of(cn, cp);
            chain.ignore("match", "tls_context", "tls_context_set");
            chain.array("filters", (fn, fp) -> {
                JsonObject f = JsonObject.of(fn, fp);
                String type = f.requiredString("type");
                JsonObject cfg = f.object("config");
                f.finish();
                if (!type.equals("proxy")) {
                    if (!type.equals("connection_manager")) {
                        warnings.add(fp + ": filter type \"" + type + "\" is MOSN-only and ignored");
                    }
                    return null;
                }
                if (cfg == null) {
                    throw new ConfigException(f.at("config"), null, "the proxy filter's config");
                }
                String down = cfg.string("downstream_protocol", "Http1");
                protocol[0] = switch (down.toLowerCase(Locale.ROOT)) {
                    case "http1", "auto" -> Protocol.HTTP;
                    case "bolt", "sofarpc", "x", "boltv2" -> Protocol.BOLT;
                    default -> throw new ConfigException(cfg.at("downstream_protocol"), down,
                            "\"Http1\" or \"bolt\" (HTTP/2 is not supported yet)");
                };
                cfg.string("upstream_protocol", null);
                router[0] = cfg.string("router_config_name", null);
                cfg.ignore("extend_config", "name", "fallback_for_unknown_protocol");
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
                        r.cluster(), r.prefixRewrite(), r.timeout()));
            } else if (protocol[0] == Protocol.BOLT) {
                // Bolt has no host or path: a MOSN "prefix /" catch-all becomes a match-all
                forProtocol.add(new RouteConfig(r.name(), new RouteMatch(null, null, null, m.headers(), m.service(), null),
                        r.cluster(), null, r.timeout()));
            } else {
                forProtocol.add(r);
            }
        }
        BoltOptions bolt = BoltOptions.defaults();
        return build(o.path(), () -> new ListenerConfig(name, protocol[0], bind.host(), port, forProtocol, null, bolt));
    }

    private static ClusterConfig cluster(JsonObject o, List<String> warnings) {
        String name = o.requiredString("name");
        String type = o.string("type", "SIMPLE");
        if (!type.equalsIgnoreCase("SIMPLE")) {
            throw new ConfigException(o.at("type"), type, "\"SIMPLE\" (static hosts; DNS and original-destination clusters are not supported)");
        }
        LbPolicy lb = ConfigLoader.lb(o, "lb_type");
        List<HostConfig> hosts = o.array("hosts", (n, p) -> {
            JsonObject h = JsonObject.of(n, p);
            String address = h.requiredString("address");
            int weight = h.integer("weight", 1);
            h.ignore("hostname", "metadata", "tls_disable");
            h.finish();
            return build(p, () -> HostConfig.parse(address, weight));
        });
        Duration connect = o.duration("connect_timeout", null);
        HealthCheckConfig hc = healthCheck(o.object("health_check"));
        SlowStartConfig ss = ConfigLoader.slowStart(o.object("slow_start"), true);
        JsonObject lbConfig = o.object("lbconfig");
        int choices = 2;
        double bias = 1.0;
        if (lbConfig != null) {
            choices = lbConfig.integer("choice_count", 2);
            bias = lbConfig.number("active_request_bias", 1.0);
            lbConfig.finish();
        }
        o.ignore("max_request_per_conn", "conn_buffer_limit_bytes", "circuit_breakers", "idle_timeout", "keepalive",
                "tls_context", "lb_subset_config", "spec", "original_dst_lb_config", "cluster_manager_tls",
                "dns_resolvers", "dns_refresh_rate", "respect_dns_ttl", "connection_pool_mode", "cluster_pool_enable");
        o.finish();
        int ch = choices;
        double b = bias;
        // MOSN warms up every host present at boot (warm_up_at_boot); say so explicitly in the MOSN format
        return build(o.path(), () -> new ClusterConfig(name, Protocol.HTTP, lb, hosts, connect, null, null, hc, ss, null,
                ClusterConfig.DEFAULT_PANIC_THRESHOLD, ss != null, ch, b));
    }

    private static HealthCheckConfig healthCheck(JsonObject o) {
        if (o == null) {
            return null;
        }
        String protocol = o.string("protocol", "");
        o.string("service_name", null);
        HealthCheckConfig d = HealthCheckConfig.of(HealthCheckConfig.TCP);
        Duration timeout = o.duration("timeout", d.timeout());
        Duration interval = o.duration("interval", d.interval());
        Duration jitter = o.duration("interval_jitter", d.intervalJitter());
        Duration initial = o.duration("initial_delay_seconds", d.initialDelay());
        int healthy = o.integer("healthy_threshold", d.healthyThreshold());
        int unhealthy = o.integer("unhealthy_threshold", d.unhealthyThreshold());
        String path = null;
        List<StatusRange> codes = null;
        JsonObject check = o.object("check_config");
        if (check != null) {
            JsonObject http = check.object("http_check_config");
            if (http != null) {
                path = http.string("path", null);
                codes = http.array("codes", (n, p) -> {
                    JsonObject c = JsonObject.of(n, p);
                    int start = c.integer("Start", 200);
                    int end = c.integer("End", start);
                    c.finish();
                    return build(p, () -> new StatusRange(start, end));
                });
                http.ignore("timeout", "method", "scheme", "port");
                http.finish();
            }
            check.finish();
        }
        o.ignore("event_log_path", "common_callbacks");
        o.finish();
        String probe = switch (protocol) {
            case "Http1" -> HealthCheckConfig.HTTP;
            case "bolt", "SofaRpc" -> HealthCheckConfig.BOLT;
            default -> HealthCheckConfig.TCP; // as in MOSN: anything else (even "http1") is a TCP dial
        };
        String p = path;
        List<StatusRange> c = codes;
        return build(o.path(), () -> new HealthCheckConfig(probe, interval, timeout, jitter, initial, healthy, unhealthy,
                null, p, null, c));
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
            return AdminConfig.defaults();
        }
        String host = sock.string("address", "127.0.0.1");
        int port = sock.integer("port_value", AdminConfig.DEFAULT_PORT);
        sock.finish();
        o.finish();
        return build(o.path(), () -> new AdminConfig(true, host, port));
    }
}
