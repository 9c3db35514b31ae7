package io.sluice.core.config;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The whole running configuration: immutable, validated on construction (names unique, every
 * route's cluster exists, no two listeners on one address). Paths in errors are JSON paths.
 *
 * @param listeners    downstream listeners
 * @param clusters     upstream clusters
 * @param admin        admin listener; null = none (an embedded gateway opens no admin port unless asked;
 *                     a config file without an {@code admin} section gets {@link AdminConfig#defaults()})
 * @param transport    event-loop transport
 * @param drainTimeout on shutdown, how long in-flight requests may take to finish
 * @param accessLog    the access log (off by default)
 * @param watchConfig  polling the config file for changes (off by default)
 * @param rateLimit    rate-limit rules (none by default)
 */
public record GatewayConfig(List<ListenerConfig> listeners, List<ClusterConfig> clusters, AdminConfig admin,
                            TransportConfig transport, Duration drainTimeout, AccessLogConfig accessLog,
                            WatchConfig watchConfig, RateLimitConfig rateLimit) {

    public static final Duration DEFAULT_DRAIN_TIMEOUT = Duration.ofSeconds(10);

    /** A config without an access log. */
    public GatewayConfig(List<ListenerConfig> listeners, List<ClusterConfig> clusters, AdminConfig admin,
                         TransportConfig transport, Duration drainTimeout) {
        this(listeners, clusters, admin, transport, drainTimeout, null, null);
    }

    /** A config that does not watch its file. */
    public GatewayConfig(List<ListenerConfig> listeners, List<ClusterConfig> clusters, AdminConfig admin,
                         TransportConfig transport, Duration drainTimeout, AccessLogConfig accessLog) {
        this(listeners, clusters, admin, transport, drainTimeout, accessLog, null);
    }

    /** A config without rate limits. */
    public GatewayConfig(List<ListenerConfig> listeners, List<ClusterConfig> clusters, AdminConfig admin,
                         TransportConfig transport, Duration drainTimeout, AccessLogConfig accessLog,
                         WatchConfig watchConfig) {
        this(listeners, clusters, admin, transport, drainTimeout, accessLog, watchConfig, null);
    }

    public GatewayConfig {
        rateLimit = rateLimit == null ? RateLimitConfig.disabled() : rateLimit;
        accessLog = accessLog == null ? AccessLogConfig.disabled() : accessLog;
        watchConfig = watchConfig == null ? WatchConfig.disabled() : watchConfig;
        listeners = Checks.list(listeners);
        clusters = Checks.list(clusters);
        admin = admin == null ? AdminConfig.disabled() : admin;
        transport = transport == null ? TransportConfig.defaults() : transport;
        drainTimeout = drainTimeout == null ? DEFAULT_DRAIN_TIMEOUT : Checks.nonNegative("$.drain_timeout", drainTimeout);
        if (listeners.isEmpty()) {
            throw new ConfigException("$.listeners", "[]", "at least one listener");
        }
        Map<String, ClusterConfig> byName = new HashMap<>();
        for (int i = 0; i < clusters.size(); i++) {
            if (byName.putIfAbsent(clusters.get(i).name(), clusters.get(i)) != null) {
                throw new ConfigException("$.clusters[" + i + "].name", clusters.get(i).name(), "a cluster name not used before");
            }
        }
        Set<String> names = new HashSet<>();
        Set<String> binds = new HashSet<>();
        for (int i = 0; i < listeners.size(); i++) {
            ListenerConfig l = listeners.get(i);
            String at = "$.listeners[" + i + "]";
            if (!names.add(l.name())) {
                throw new ConfigException(at + ".name", l.name(), "a listener name not used before");
            }
            if (l.port() != 0 && !binds.add(l.address() + ":" + l.port())) {
                throw new ConfigException(at + ".port", l.port(), "a port no other listener binds on " + l.address());
            }
            for (int r = 0; r < l.routes().size(); r++) {
                TrafficPolicies.check(at + ".routes[" + r + "]", l.routes().get(r), byName); // weighted clusters, mirrors
                String c = l.routes().get(r).cluster();
                if (c == null) { // a route answering by itself (redirect, direct_response): HTTP only
                    if (l.protocol() == Protocol.BOLT) {
                        throw new ConfigException(at + ".routes[" + r + "].cluster", null, "a cluster (a Bolt listener has no redirects or direct responses)");
                    }
                    continue;
                }
                ClusterConfig target = byName.get(c);
                if (target == null) {
                    throw new ConfigException(at + ".routes[" + r + "].cluster", c, "one of the cluster names " + byName.keySet());
                }
                if (l.protocol() != Protocol.AUTO && target.protocol() != l.protocol()) {
                    throw new ConfigException(at + ".routes[" + r + "].cluster", c, "a cluster speaking " + l.protocol().jsonName()
                            + " like its listener (\"" + c + "\" speaks " + target.protocol().jsonName()
                            + "; a listener with \"protocol\": \"auto\" takes both)");
                }
                RouteMatch m = l.routes().get(r).match();
                boolean httpOnly = m.path() != null || !m.hosts().isEmpty() || !m.methods().isEmpty();
                boolean boltOnly = m.service() != null || m.rpcMethod() != null;
                if (target.protocol() == Protocol.BOLT && httpOnly || target.protocol() == Protocol.HTTP && boltOnly) {
                    throw new ConfigException(at + ".routes[" + r + "].match", httpOnly ? "path/hosts/methods" : "service/method",
                            "conditions a request to cluster \"" + c + "\" (" + target.protocol().jsonName() + ") can meet: "
                                    + (httpOnly ? "path, hosts and methods are HTTP's" : "service and method are Bolt's"));
                }
            }
            String dc = l.bolt().defaultCluster();
            if (l.protocol() != Protocol.HTTP && dc != null) {
                ClusterConfig target = byName.get(dc);
                if (target == null) {
                    throw new ConfigException(at + ".bolt.default_cluster", dc, "one of the cluster names " + byName.keySet());
                }
                if (target.protocol() != Protocol.BOLT) {
                    throw new ConfigException(at + ".bolt.default_cluster", dc, "a cluster speaking bolt (\"" + dc + "\" speaks "
                            + target.protocol().jsonName() + ")");
                }
            }
        }
        checkRateLimitRoutes(listeners, rateLimit);
        if (admin.enabled() && admin.port() != 0 && binds.contains(admin.address() + ":" + admin.port())) {
            throw new ConfigException("$.admin.port", admin.port(), "a port no listener binds on " + admin.address());
        }
    }

    /** Every route a rate-limit rule names must exist (a route's name, or {@code route<index>} without one). */
    private static void checkRateLimitRoutes(List<ListenerConfig> listeners, RateLimitConfig rl) {
        Set<String> routes = new HashSet<>();
        for (ListenerConfig l : listeners) {
            for (int r = 0; r < l.routes().size(); r++) {
                String n = l.routes().get(r).name();
                routes.add(n != null ? n : "route" + r);
            }
        }
        for (int i = 0; i < rl.rules().size(); i++) {
            List<String> names = rl.rules().get(i).routes();
            for (int j = 0; j < names.size(); j++) {
                if (!routes.contains(names.get(j))) {
                    throw new ConfigException("$.rate_limit.rules[" + i + "].routes[" + j + "]", names.get(j),
                            "one of the route names " + new java.util.TreeSet<>(routes));
                }
            }
        }
    }

    public GatewayConfig withRateLimit(RateLimitConfig r) {
        return toBuilder().rateLimit(r).build();
    }

    public ClusterConfig cluster(String name) {
        for (ClusterConfig c : clusters) {
            if (c.name().equals(name)) {
                return c;
            }
        }
        return null;
    }

    public GatewayConfig withListeners(List<ListenerConfig> l) {
        return toBuilder().listeners(l).build();
    }

    public GatewayConfig withClusters(List<ClusterConfig> c) {
        return toBuilder().clusters(c).build();
    }

    public GatewayConfig withAdmin(AdminConfig a) {
        return toBuilder().admin(a).build();
    }

    public GatewayConfig withAccessLog(AccessLogConfig log) {
        return toBuilder().accessLog(log).build();
    }

    public GatewayConfig withWatchConfig(WatchConfig w) {
        return toBuilder().watchConfig(w).build();
    }

    public GatewayConfig withTransport(TransportConfig t) {
        return toBuilder().transport(t).build();
    }

    /** A builder with the defaults a config file gets for keys it leaves out. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this config's values. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.listeners = listeners;
        b.clusters = clusters;
        b.admin = admin;
        b.transport = transport;
        b.drainTimeout = drainTimeout;
        b.accessLog = accessLog;
        b.watchConfig = watchConfig;
        b.rateLimit = rateLimit;
        return b;
    }

    /**
     * Builds a {@link GatewayConfig} (defaults: no listeners or clusters — at least one listener is
     * required —, no admin listener, default transport, no access log, no file watching, drain
     * timeout 10 s). Validation happens in the record's constructor, when {@link #build()} is called.
     */
    public static final class Builder {
        private List<ListenerConfig> listeners = List.of();
        private List<ClusterConfig> clusters = List.of();
        private AdminConfig admin;
        private TransportConfig transport;
        private Duration drainTimeout = DEFAULT_DRAIN_TIMEOUT;
        private AccessLogConfig accessLog;
        private WatchConfig watchConfig;
        private RateLimitConfig rateLimit;

        private Builder() {
        }

        public Builder listeners(List<ListenerConfig> listeners) {
            this.listeners = listeners;
            return this;
        }

        public Builder clusters(List<ClusterConfig> clusters) {
            this.clusters = clusters;
            return this;
        }

        public Builder admin(AdminConfig admin) {
            this.admin = admin;
            return this;
        }

        public Builder transport(TransportConfig transport) {
            this.transport = transport;
            return this;
        }

        public Builder drainTimeout(Duration drainTimeout) {
            this.drainTimeout = drainTimeout;
            return this;
        }

        public Builder accessLog(AccessLogConfig accessLog) {
            this.accessLog = accessLog;
            return this;
        }

        public Builder watchConfig(WatchConfig watchConfig) {
            this.watchConfig = watchConfig;
            return this;
        }

        public Builder rateLimit(RateLimitConfig rateLimit) {
            this.rateLimit = rateLimit;
            return this;
        }

        /** The listeners, given one by one. */
        public Builder listeners(ListenerConfig... listeners) {
            this.listeners = List.of(listeners);
            return this;
        }

        /** The clusters, given one by one. */
        public Builder clusters(ClusterConfig... clusters) {
            this.clusters = List.of(clusters);
            return this;
        }

        public GatewayConfig build() {
            return new GatewayConfig(listeners, clusters, admin, transport, drainTimeout, accessLog, watchConfig, rateLimit);
        }
    }
}
