package io.sluice.server.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.core.config.AccessLogConfig;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.CidrRange;
import io.sluice.core.config.CircuitBreakerConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.UpstreamTlsConfig;
import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HeaderMatch;
import io.sluice.core.config.HashLbConfig;
import io.sluice.core.config.HealthCheckConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.Http2Options;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.LbPolicy;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.TlsConfig;
import io.sluice.core.config.OutlierConfig;
import io.sluice.core.config.PathOptions;
import io.sluice.core.config.PoolConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RetryPolicyConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RequestTracing;
import io.sluice.core.config.RouteMatch;
import io.sluice.core.config.RouteRules;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.config.StatusRange;
import io.sluice.core.config.StringMatch;
import io.sluice.core.config.TrafficPolicy;
import io.sluice.core.config.TransportConfig;
import io.sluice.core.config.WatchConfig;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * Reads a gateway config file into the validated {@link GatewayConfig} records. Two formats:
 * <ul>
 *   <li><b>native</b> (top-level {@code listeners} / {@code clusters}): snake_case mirror of the
 *       records, see {@code docs/config.md};</li>
 *   <li><b>MOSN</b> (top-level {@code servers} / {@code cluster_manager}): the subset of MOSN's
 *       {@code mosn_config.json} that a proxy of HTTP/1.1 and Bolt needs; keys that only matter to
 *       MOSN (logging, tracing, pprof...) become warnings.</li>
 * </ul>
 * Every error is a {@link ConfigException} naming the JSON path, the value and what was expected;
 * unknown keys are errors (typos would otherwise be silently ignored), with a suggestion.
 */
public final class ConfigLoader {

    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(JsonParser.Feature.ALLOW_COMMENTS)
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);

    private ConfigLoader() {
    }

    /** Reads and validates {@code file}. */
    public static LoadedConfig load(Path file) {
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            throw new ConfigException("$", file.toString(), "an existing config file");
        } catch (IOException e) {
            throw new ConfigException("$", file.toString(), "a readable config file (" + e.getMessage() + ")");
        }
        return parse(text, file.toString());
    }

    /** Parses and validates {@code json}; {@code source} names it in syntax errors. */
    public static LoadedConfig parse(String json, String source) {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            JsonLocation loc = e.getLocation();
            String where = loc == null ? "" : " at line " + loc.getLineNr() + ", column " + loc.getColumnNr();
            throw new ConfigException("$", source, "valid JSON: " + e.getOriginalMessage() + where);
        }
        if (root == null || root.isMissingNode()) {
            throw new ConfigException("$", source, "a JSON object, not an empty file");
        }
        List<String> warnings = new ArrayList<>();
        if (root.has("servers") || root.has("cluster_manager")) {
            GatewayConfig config = MosnFormat.read(JsonObject.of(root, "$"), warnings);
            warnLowMinWeight(config, "$.cluster_manager.clusters", true, warnings);
            TrafficJson.warnUnkeyedHashClusters(config, "$.cluster_manager.clusters", warnings);
            return new LoadedConfig(config, LoadedConfig.Format.MOSN, List.copyOf(warnings));
        }
        io.sluice.server.warmup.WarmUpConfig warmUp = root.isObject() ? WarmUpJson.read(root) : null; // warm-up: startup only
        GatewayConfig config = readNative(JsonObject.of(WarmUpJson.without(root), "$"));
        warnLowMinWeight(config, "$.clusters", false, warnings);
        TrafficJson.warnUnkeyedHashClusters(config, "$.clusters", warnings);
        return new LoadedConfig(config, LoadedConfig.Format.NATIVE, List.copyOf(warnings), warmUp);
    }

    private static String number(double v) {
        return BigDecimal.valueOf(v).round(new MathContext(6)).stripTrailingZeros().toPlainString();
    }

    /** A slow-start floor under this fraction is allowed but warned about. */
    static final double LOW_MIN_WEIGHT = 0.05;

    /**
     * Warns about slow-start floors below 5 %: a warming host is queued {@code 1 / (floor × weight)}
     * virtual time units ahead and only re-evaluated when reached, so with many peers it can get no
     * traffic for long, even past its window (Envoy #19526, #29259). 0 is rejected by the record.
     */
    private static void warnLowMinWeight(GatewayConfig config, String clustersPath, boolean fraction, List<String> warnings) {
        List<ClusterConfig> clusters = config.clusters();
        for (int i = 0; i < clusters.size(); i++) {
            ClusterConfig c = clusters.get(i);
            SlowStartConfig ss = c.slowStart();
            if (ss != null && ss.minWeight() < LOW_MIN_WEIGHT) {
                String pct = number(ss.minWeight() * 100);
                warnings.add(clustersPath + "[" + i + "].slow_start.min_weight_percent: "
                        + (fraction ? number(ss.minWeight()) + " (" + pct + " %)" : pct)
                        + " in cluster \"" + c.name() + "\" is below 5 %: a warming host may get no traffic for long,"
                        + " even after its window (Envoy #19526, #29259); 10 % is the default");
            }
        }
    }

    /** Runs a record constructor, placing its relative error paths under {@code at}. */
    static <T> T build(String at, Supplier<T> constructor) {
        try {
            return constructor.get();
        } catch (ConfigException e) {
            throw e.path().startsWith("$") ? e : e.under(at);
        }
    }

    // ------------------------------------------------------------------ native format

    static GatewayConfig readNative(JsonObject root) {
        List<ClusterConfig> clusters = root.array("clusters", (n, p) -> cluster(JsonObject.of(n, p)));
        List<ListenerConfig> listeners = root.array("listeners", (n, p) -> listener(JsonObject.of(n, p)));
        AdminConfig admin = admin(root.object("admin"));
        TransportConfig transport = transport(root.object("transport"));
        Duration drain = root.duration("drain_timeout", null);
        AccessLogConfig accessLog = accessLog(root.object("access_log"));
        WatchConfig watch = watchConfig(root.object("watch_config"));
        io.sluice.core.config.RateLimitConfig rateLimit = RateLimitJson.read(root.object("rate_limit")); // docs/rate-limits.md
        root.finish();
        return build("$", () -> new GatewayConfig(listeners, clusters, admin, transport, drain, accessLog, watch, rateLimit));
    }

    private static ListenerConfig listener(JsonObject o) {
        String name = o.requiredString("name");
        Protocol protocol = protocol(o, "protocol", Protocol.HTTP, true);
        String address = o.string("address", "127.0.0.1");
        int port = o.integer("port", -1);
        if (port < 0) {
            throw new ConfigException(o.at("port"), o.has("port") ? port : null, "a port in [0, 65535]");
        }
        List<RouteConfig> routes = o.array("routes", (n, p) -> route(JsonObject.of(n, p)));
        HttpOptions http = httpOptions(o.object("http"));
        BoltOptions bolt = boltOptions(o.object("bolt"));
        int maxConnections = o.integer("max_connections", ListenerConfig.DEFAULT_MAX_CONNECTIONS);
        int perClient = o.integer("max_connections_per_client", ListenerConfig.DEFAULT_MAX_CONNECTIONS_PER_CLIENT);
        TlsConfig tls = TlsConfigReader.read(o.object("tls"), protocol, http.http2().enabled()); // http2: h2 in the default ALPN
        o.finish();
        return build(o.path(), () -> new ListenerConfig(name, protocol, address, port, routes, http, bolt,
                maxConnections, perClient, tls));
    }

    private static HttpOptions httpOptions(JsonObject o) {
        HttpOptions d = HttpOptions.defaults();
        if (o == null) {
            return d;
        }
        int line = o.integer("max_initial_line_length", d.maxInitialLineLength());
        int header = (int) Math.min(Integer.MAX_VALUE, o.bytes("max_header_size", d.maxHeaderSize()));
        long body = o.bytes("max_request_body", d.maxRequestBodyBytes());
        Duration idle = o.duration("idle_timeout", d.idleTimeout());
        Duration head = o.duration("request_header_timeout", d.requestHeaderTimeout());
        boolean preserveHost = o.bool("preserve_host", d.preserveHost());
        boolean xff = o.bool("x_forwarded", d.xForwarded());
        Duration bodyTimeout = o.duration("request_body_timeout", d.requestBodyTimeout());
        Duration write = o.duration("write_timeout", d.writeTimeout());
        Duration grace = o.duration("drain_grace", d.drainGrace());
        List<CidrRange> trusted = o.array("trusted_proxies", ConfigLoader::cidr);
        PathOptions path = pathOptions(o.object("path"));
        int responseHeader = (int) Math.min(Integer.MAX_VALUE,
                o.bytes("max_response_header_size", d.maxResponseHeaderSize()));
        long minBodyRate = o.bytes("min_request_body_rate", d.minRequestBodyRate());
        Http2Options http2 = http2Options(o.object("http2"));
        RequestTracing tracing = RouteRulesJson.tracing(o.object("tracing")); // route rules: request ids, traceparent
        o.finish();
        return build(o.path(), () -> new HttpOptions(line, header, body, idle, head, preserveHost, xff, bodyTimeout,
                write, grace, trusted, path, responseHeader, minBodyRate, http2, tracing));
    }

    private static Http2Options http2Options(JsonObject o) {
        Http2Options d = Http2Options.defaults();
        if (o == null) {
            return d;
        }
        Http2Options.Builder b = d.toBuilder()
                .enabled(o.bool("enabled", d.enabled()))
                .h2cUpgrade(o.bool("h2c_upgrade", d.h2cUpgrade()))
                .maxConcurrentStreams(o.integer("max_concurrent_streams", d.maxConcurrentStreams()))
                .initialWindowSize((int) Math.min(Integer.MAX_VALUE, o.bytes("initial_window_size", d.initialWindowSize())))
                .connectionWindowSize((int) Math.min(Integer.MAX_VALUE, o.bytes("connection_window_size", d.connectionWindowSize())))
                .maxHeaderListSize((int) Math.min(Integer.MAX_VALUE, o.bytes("max_header_list_size", d.maxHeaderListSize())))
                .maxFrameSize((int) Math.min(Integer.MAX_VALUE, o.bytes("max_frame_size", d.maxFrameSize())))
                .maxRstFramesPerWindow(o.integer("max_rst_frames_per_window", d.maxRstFramesPerWindow()))
                .rstWindow(o.duration("rst_window", d.rstWindow()))
                .maxQueuedControlFrames(o.integer("max_queued_control_frames", d.maxQueuedControlFrames()))
                .maxConsecutiveEmptyDataFrames(o.integer("max_consecutive_empty_data_frames", d.maxConsecutiveEmptyDataFrames()))
                .maxSmallContinuationFrames(o.integer("max_small_continuation_frames", d.maxSmallContinuationFrames()));
        o.finish();
        return build(o.path(), b::build);
    }

    /** {@code "10.0.0.0/8"}, {@code "192.168.1.7"}, {@code "fd00::/8"}: address literals only, never names. */
    private static CidrRange cidr(JsonNode n, String path) {
        if (n == null || !n.isTextual()) {
            throw new ConfigException(path, JsonObject.describe(n), "an IP address or CIDR range such as \"10.0.0.0/8\" or \"fd00::/8\"");
        }
        try {
            return CidrRange.parse(n.asText());
        } catch (IllegalArgumentException e) {
            throw new ConfigException(path, n.asText(), "an IP address or CIDR range such as \"10.0.0.0/8\" or \"fd00::/8\" ("
                    + e.getMessage() + ")");
        }
    }

    private static PathOptions pathOptions(JsonObject o) {
        PathOptions d = PathOptions.defaults();
        if (o == null) {
            return d;
        }
        String escaped = o.string("escaped_slashes", d.escapedSlashes().jsonName());
        PathOptions.EscapedSlashes mode = switch (escaped) {
            case "reject" -> PathOptions.EscapedSlashes.REJECT;
            case "keep" -> PathOptions.EscapedSlashes.KEEP;
            case "decode" -> PathOptions.EscapedSlashes.DECODE;
            default -> throw new ConfigException(o.at("escaped_slashes"), escaped, "\"reject\", \"keep\" or \"decode\"");
        };
        boolean merge = o.bool("merge_slashes", d.mergeSlashes());
        o.finish();
        return new PathOptions(mode, merge);
    }

    private static BoltOptions boltOptions(JsonObject o) {
        BoltOptions d = BoltOptions.defaults();
        if (o == null) {
            return d;
        }
        int max = (int) Math.min(Integer.MAX_VALUE, o.bytes("max_frame_length", d.maxFrameLength()));
        Duration idle = o.duration("idle_timeout", d.idleTimeout());
        String dc = o.string("default_cluster", null);
        int inFlight = o.integer("max_in_flight_per_connection", d.maxInFlight());
        o.finish();
        return build(o.path(), () -> new BoltOptions(max, idle, dc, inFlight));
    }

    private static RouteConfig route(JsonObject o) {
        String name = o.string("name", null);
        RouteMatch match = match(o.object("match"));
        TrafficPolicy traffic = TrafficJson.route(o); // weighted_clusters, hash_policy, mirrors
        RouteRules rules = RouteRulesJson.read(o); // route rules: upgrades, header rules, rewrites, redirects
        String cluster = o.string("cluster", null);
        if (traffic != null && traffic.weightedClusters() != null) {
            if (cluster != null) {
                throw new ConfigException(o.at("cluster"), cluster, "no \"cluster\" next to \"weighted_clusters\" (one or the other)");
            }
        } else if (cluster == null && (rules == null || !rules.answersLocally())) {
            cluster = o.requiredString("cluster"); // a route with a redirect or direct_response has none
        }
        String target = cluster;
        String rewrite = o.string("prefix_rewrite", null);
        Duration timeout = o.duration("timeout", null);
        RetryPolicyConfig retry = PolicyJson.retryPolicy(o.object("retry_policy")); // resilience
        o.finish();
        return build(o.path(), () -> new RouteConfig(name, match, target, rewrite, timeout, traffic, retry, rules));
    }

    private static RouteMatch match(JsonObject o) {
        if (o == null) {
            return RouteMatch.ANY;
        }
        List<String> hosts = o.strings("hosts");
        StringMatch path = stringMatch(o, "path");
        List<String> methods = o.strings("methods");
        List<HeaderMatch> headers = o.array("headers", (n, p) -> headerMatch(JsonObject.of(n, p)));
        StringMatch service = stringMatch(o, "service");
        StringMatch method = stringMatch(o, "method");
        o.finish();
        return build(o.path(), () -> new RouteMatch(hosts, path, methods, headers, service, method));
    }

    private static HeaderMatch headerMatch(JsonObject o) {
        String name = o.requiredString("name");
        StringMatch value = stringMatchFields(o);
        boolean present = o.bool("present", true);
        if (!present) { // with a value it used to be dropped, matching the value
            throw new ConfigException(o.at("present"), false, "true, or left out (matching a header's absence is not supported)");
        }
        o.finish();
        return build(o.path(), () -> new HeaderMatch(name, value));
    }

    /** {@code "key": "/exact"} is an exact match; {@code "key": {"prefix": "/api/"}} picks the kind. */
    private static StringMatch stringMatch(JsonObject parent, String key) {
        JsonNode v = parent.raw(key);
        if (v == null) {
            return null;
        }
        if (v.isTextual()) {
            return build(parent.at(key), () -> StringMatch.exact(v.asText()));
        }
        JsonObject o = JsonObject.of(v, parent.at(key));
        StringMatch m = stringMatchFields(o);
        if (m == null) {
            throw new ConfigException(o.path(), JsonObject.describe(v), "one of {\"exact\": ..}, {\"prefix\": ..}, {\"regex\": ..}");
        }
        o.finish();
        return m;
    }

    private static StringMatch stringMatchFields(JsonObject o) {
        String exact = o.string("exact", null);
        String prefix = o.string("prefix", null);
        String regex = o.string("regex", null);
        int given = (exact != null ? 1 : 0) + (prefix != null ? 1 : 0) + (regex != null ? 1 : 0);
        if (given > 1) {
            throw new ConfigException(o.path(), "several of exact/prefix/regex", "exactly one of exact, prefix, regex");
        }
        if (exact != null) {
            return StringMatch.exact(exact);
        }
        if (prefix != null) {
            return StringMatch.prefix(prefix);
        }
        if (regex != null) {
            return build(o.at("regex"), () -> StringMatch.regex(regex));
        }
        return null;
    }

    private static ClusterConfig cluster(JsonObject o) {
        String name = o.requiredString("name");
        Protocol protocol = protocol(o, "protocol", Protocol.HTTP);
        LbPolicy lb = lb(o, "lb");
        List<HostConfig> hosts = o.array("hosts", ConfigLoader::host);
        Duration connect = o.duration("connect_timeout", null);
        Duration response = o.duration("response_timeout", null);
        PoolConfig pool = pool(o.object("pool"));
        HealthCheckConfig hc = healthCheck(o.object("health_check"));
        SlowStartConfig ss = slowStart(o.object("slow_start"), false);
        OutlierConfig outlier = outlier(o.object("outlier"));
        int panic = o.integer("panic_threshold", ClusterConfig.DEFAULT_PANIC_THRESHOLD);
        boolean warm = o.bool("warm_up_at_boot", false);
        int choices = o.integer("least_request_choices", 2);
        double bias = o.number("active_request_bias", 1.0);
        UpstreamTlsConfig tls = UpstreamTlsJson.read(o.object("tls")); // upstream TLS, null = cleartext
        HashLbConfig hashLb = TrafficJson.hashLb(o); // ring_hash, maglev
        RetryPolicyConfig retry = PolicyJson.retryPolicy(o.object("retry_policy")); // resilience
        CircuitBreakerConfig breakers = PolicyJson.circuitBreakers(o.object("circuit_breakers"), protocol);
        DiscoveryConfig discovery = discovery(o.object("discovery"));
        ClusterConfig.ClusterHeaders headers = RouteRulesJson.clusterHeaders(o); // route rules: the cluster's header rules
        String up = o.string("upstream_protocol", "http1"); // http2: h2c upstreams
        io.sluice.core.config.UpstreamProtocol upstream = io.sluice.core.config.UpstreamProtocol.of(up);
        if (upstream == null) {
            throw new ConfigException(o.at("upstream_protocol"), up, "\"http1\", \"h2c\" or \"h2\"");
        }
        io.sluice.core.config.UpstreamHttp2Config h2 = UpstreamH2Json.read(o.object("http2")); // http2
        o.finish();
        return build(o.path(), () -> new ClusterConfig(name, protocol, lb, hosts, connect, response, pool, hc, ss, outlier,
                panic, warm, choices, bias, tls, hashLb, retry, breakers, discovery, headers, upstream, h2));
    }

    /** {@code "discovery": {"type": "zookeeper", "address": ..., "service": ...}} (docs/discovery.md). */
    private static DiscoveryConfig discovery(JsonObject o) {
        if (o == null) {
            return null;
        }
        String type = o.requiredString("type");
        String address = o.string("address", null);
        String service = o.string("service", null);
        String protocol = o.string("protocol", null);
        String source = o.string("source", null);
        Duration session = o.duration("session_timeout", null);
        Duration connection = o.duration("connection_timeout", null);
        boolean allowEmpty = o.bool("allow_empty", false);
        Duration grace = o.duration("flap_grace", null);
        String dnsServer = o.string("dns_server", null);
        Duration refreshMin = o.duration("refresh_min", null);
        Duration refreshMax = o.duration("refresh_max", null);
        int maxServices = o.integer("max_services", 0);
        Duration idle = o.duration("idle_timeout", null);
        Duration initialFetch = o.duration("initial_fetch_timeout", null); // discovery: /ready waits for the first list
        io.sluice.core.config.NacosOptions nacos = NacosJson.read(o); // nacos discovery: null unless a nacos key is set
        o.finish();
        return build(o.path(), () -> new DiscoveryConfig(type, address, service, protocol, source, session, connection,
                allowEmpty, grace, dnsServer, refreshMin, refreshMax, maxServices, idle, initialFetch, nacos));
    }

    /** {@code "10.0.0.1:8080"} (weight 1) or {@code {"address": "10.0.0.1:8080", "weight": 3}}. */
    static HostConfig host(JsonNode n, String path) {
        if (n != null && n.isTextual()) {
            return build(path, () -> HostConfig.parse(n.asText(), 1));
        }
        JsonObject o = JsonObject.of(n, path);
        String address = o.requiredString("address");
        int weight = o.integer("weight", 1);
        o.finish();
        return build(path, () -> HostConfig.parse(address, weight));
    }

    private static PoolConfig pool(JsonObject o) {
        PoolConfig d = PoolConfig.defaults();
        if (o == null) {
            return d;
        }
        int maxIdle = o.integer("max_idle_per_host", d.maxIdlePerHost());
        Duration idle = o.duration("idle_timeout", d.idleTimeout());
        int bolt = o.integer("bolt_connections_per_host", d.boltConnectionsPerHost());
        o.finish();
        return build(o.path(), () -> new PoolConfig(maxIdle, idle, bolt));
    }

    private static HealthCheckConfig healthCheck(JsonObject o) {
        if (o == null) {
            return null;
        }
        HealthCheckConfig d = HealthCheckConfig.of(HealthCheckConfig.TCP);
        String probe = o.string("probe", HealthCheckConfig.TCP);
        Duration interval = o.duration("interval", d.interval());
        Duration timeout = o.duration("timeout", d.timeout());
        Duration jitter = o.duration("interval_jitter", d.intervalJitter());
        Duration initial = o.duration("initial_delay", d.initialDelay());
        int healthy = o.integer("healthy_threshold", d.healthyThreshold());
        int unhealthy = o.integer("unhealthy_threshold", d.unhealthyThreshold());
        String method = null;
        String path = null;
        String hostHeader = null;
        List<StatusRange> statuses = null;
        JsonObject http = o.object("http");
        if (http != null) {
            method = http.string("method", null);
            path = http.string("path", null);
            hostHeader = http.string("host", null);
            statuses = http.array("expected_statuses", ConfigLoader::statusRange);
            http.finish();
        }
        o.finish();
        String m = method;
        String p = path;
        String h = hostHeader;
        List<StatusRange> s = statuses;
        return build(o.path(), () -> new HealthCheckConfig(probe, interval, timeout, jitter, initial, healthy, unhealthy,
                m, p, h, s));
    }

    /** {@code 204}, {@code "200-299"} or {@code "2xx"}. */
    private static StatusRange statusRange(JsonNode n, String path) {
        if (n.isIntegralNumber()) {
            return build(path, () -> new StatusRange(n.asInt(), n.asInt()));
        }
        if (n.isTextual()) {
            String t = n.asText().trim().toLowerCase(Locale.ROOT);
            try {
                if (t.matches("[1-5]xx")) {
                    int c = (t.charAt(0) - '0') * 100;
                    return new StatusRange(c, c + 99);
                }
                int dash = t.indexOf('-');
                if (dash > 0) {
                    int from = Integer.parseInt(t.substring(0, dash).trim());
                    int to = Integer.parseInt(t.substring(dash + 1).trim());
                    return build(path, () -> new StatusRange(from, to));
                }
                int c = Integer.parseInt(t);
                return build(path, () -> new StatusRange(c, c));
            } catch (NumberFormatException e) {
                // reported below
            }
        }
        throw new ConfigException(path, JsonObject.describe(n), "a status (204), a range (\"200-299\") or a class (\"2xx\")");
    }

    /**
     * Native: {@code min_weight_percent} in percent (0, 100]. MOSN ({@code fraction = true}):
     * {@code slow_start_duration} and {@code min_weight_percent} as a fraction (0, 1], and a {@code mode}.
     */
    static SlowStartConfig slowStart(JsonObject o, boolean mosn) {
        if (o == null) {
            return null;
        }
        Duration window;
        double minWeight;
        if (mosn) {
            String mode = o.string("mode", "duration");
            if (!mode.equals("duration")) {
                throw new ConfigException(o.at("mode"), mode, "\"duration\" (the only slow-start mode)");
            }
            window = o.duration("slow_start_duration", Duration.ZERO);
            // MOSN maps values <= 0 to 0.1; we refuse them instead of guessing
            minWeight = o.number("min_weight_percent", SlowStartConfig.DEFAULT_MIN_WEIGHT);
        } else {
            window = o.duration("window", Duration.ZERO);
            minWeight = o.number("min_weight_percent", SlowStartConfig.DEFAULT_MIN_WEIGHT * 100) / 100.0;
        }
        double aggression = o.number("aggression", SlowStartConfig.DEFAULT_AGGRESSION);
        o.finish();
        return build(o.path(), () -> new SlowStartConfig(window, aggression, minWeight));
    }

    private static OutlierConfig outlier(JsonObject o) {
        if (o == null) {
            return null;
        }
        OutlierConfig d = OutlierConfig.defaults();
        int failures = o.integer("consecutive_failures", d.consecutiveFailures());
        boolean count5xx = o.bool("count_5xx", d.count5xx());
        Duration base = o.duration("base_ejection_time", d.baseEjectionTime());
        Duration max = o.duration("max_ejection_time", d.maxEjectionTime());
        int percent = o.integer("max_ejection_percent", d.maxEjectionPercent());
        Duration decay = o.duration("ejection_decay", null);
        o.finish();
        return build(o.path(), () -> new OutlierConfig(failures, count5xx, base, max, percent, decay));
    }

    private static AdminConfig admin(JsonObject o) {
        AdminConfig d = AdminConfig.defaults();
        if (o == null) {
            return d;
        }
        boolean enabled = o.bool("enabled", d.enabled());
        String address = o.string("address", d.address());
        int port = o.integer("port", d.port());
        boolean metrics = o.bool("metrics", d.metrics());
        o.finish();
        return build(o.path(), () -> new AdminConfig(enabled, address, port, metrics));
    }

    private static WatchConfig watchConfig(JsonObject o) {
        WatchConfig d = WatchConfig.disabled();
        if (o == null) {
            return d;
        }
        boolean enabled = o.bool("enabled", true);
        Duration interval = o.duration("interval", d.interval());
        o.finish();
        return build(o.path(), () -> new WatchConfig(enabled, interval));
    }

    private static AccessLogConfig accessLog(JsonObject o) {
        AccessLogConfig d = AccessLogConfig.disabled();
        if (o == null) {
            return d;
        }
        boolean enabled = o.bool("enabled", true);
        String path = o.string("path", d.path());
        String format = o.string("format", d.format());
        int queue = o.integer("queue_size", d.queueSize());
        o.finish();
        return build(o.path(), () -> new AccessLogConfig(enabled, path, format, queue));
    }

    private static TransportConfig transport(JsonObject o) {
        TransportConfig d = TransportConfig.defaults();
        if (o == null) {
            return d;
        }
        String type = o.string("type", d.type());
        int workers = o.integer("worker_threads", d.workerThreads());
        int backlog = o.integer("backlog", d.backlog());
        boolean reusePort = o.bool("reuse_port", d.reusePort());
        o.finish();
        return build(o.path(), () -> new TransportConfig(type, workers, backlog, reusePort));
    }

    static Protocol protocol(JsonObject o, String key, Protocol def) {
        return protocol(o, key, def, false);
    }

    /** {@code auto} (HTTP and Bolt on one port) only where {@code listener}. */
    static Protocol protocol(JsonObject o, String key, Protocol def, boolean listener) {
        String s = o.string(key, null);
        if (s == null) {
            return def;
        }
        return switch (s.toLowerCase(Locale.ROOT)) {
            case "http", "http1", "http/1.1" -> Protocol.HTTP;
            case "bolt", "sofarpc" -> Protocol.BOLT;
            case "auto" -> {
                if (!listener) {
                    throw new ConfigException(o.at(key), s, "\"http\" or \"bolt\" (what the hosts speak; \"auto\" is for listeners)");
                }
                yield Protocol.AUTO;
            }
            default -> throw new ConfigException(o.at(key), s, listener ? "\"http\", \"bolt\" or \"auto\"" : "\"http\" or \"bolt\"");
        };
    }

    static LbPolicy lb(JsonObject o, String key) {
        String s = o.string(key, null);
        if (s == null) {
            return null;
        }
        LbPolicy p = LbPolicy.parse(s);
        if (p == null) {
            throw new ConfigException(o.at(key), s,
                    "one of weighted_round_robin, round_robin, random, least_request, ring_hash, maglev (or MOSN's LB_* names)");
        }
        return p;
    }
}
