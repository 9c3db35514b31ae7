package io.sluice.core.config;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A named set of upstream hosts and how to balance over them.
 *
 * @param name              unique cluster name, referenced by routes
 * @param protocol          what the hosts speak
 * @param lb                load-balancing policy
 * @param hosts             the hosts; addresses unique
 * @param connectTimeout    TCP connect timeout to a host
 * @param responseTimeout   HTTP: time from request sent to response headers (routes may override);
 *                          Bolt: the cap on a request's own timeout
 * @param pool              upstream connection reuse
 * @param healthCheck       active health checking, null = off (hosts count as healthy)
 * @param slowStart         warm-up, null = off
 * @param outlier           passive ejection, null = off
 * @param panicThreshold    percent of available hosts below which the balancer uses all hosts
 * @param warmUpAtBoot      true = hosts present at first boot also warm up (MOSN's behaviour);
 *                          false (default) = they start warm
 * @param leastRequestChoices   LEAST_REQUEST: hosts sampled per pick (power of N choices)
 * @param activeRequestBias     LEAST_REQUEST with weights: weight / (active + 1) ^ bias
 * @param tls               TLS to the hosts (verification, SNI, client certificate), null = cleartext
 * @param hashLb            RING_HASH / MAGLEV: ring and table sizes (defaults when null)
 * @param retryPolicy       retries for routes to this cluster that have no policy of their own (null = none)
 * @param circuitBreakers   concurrency limits and the retry budget (null = the defaults for the protocol)
 * @param upstreamProtocol  http2: HTTP/1.1 (default, null) or h2c to the hosts of an HTTP cluster
 * @param discovery         where the hosts come from when not (only) listed here: a registry, DNS or an
 *                          embedder's {@code HostSource}; null = the static {@code hosts}
 * @param headers           HTTP header rules of the cluster, applied before the route's (null = none)
 * @param http2             http2: options of HTTP/2 upstream connections (PING keep-alive; null = defaults)
 */
public record ClusterConfig(String name, Protocol protocol, LbPolicy lb, List<HostConfig> hosts,
                            Duration connectTimeout, Duration responseTimeout, PoolConfig pool,
                            HealthCheckConfig healthCheck, SlowStartConfig slowStart, OutlierConfig outlier,
                            int panicThreshold, boolean warmUpAtBoot,
                            int leastRequestChoices, double activeRequestBias, UpstreamTlsConfig tls,
                            HashLbConfig hashLb, RetryPolicyConfig retryPolicy,
                            CircuitBreakerConfig circuitBreakers, DiscoveryConfig discovery,
                            ClusterHeaders headers,
                            UpstreamProtocol upstreamProtocol,
                            UpstreamHttp2Config http2) { // http2: upstreamProtocol, http2

    /**
     * HTTP header rules of a cluster, applied before those of the route that sent the request here.
     *
     * @param request  rules for requests sent to the cluster (null: none)
     * @param response rules for its responses (null: none)
     */
    public record ClusterHeaders(HeaderRules request, HeaderRules response) {
    }

    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(3);
    public static final Duration DEFAULT_RESPONSE_TIMEOUT = Duration.ofSeconds(15);
    public static final int DEFAULT_PANIC_THRESHOLD = 50;

    public ClusterConfig {
        Checks.notBlank("name", name);
        protocol = protocol == null ? Protocol.HTTP : protocol;
        if (protocol == Protocol.AUTO) {
            throw new ConfigException("protocol", "auto", "\"http\" or \"bolt\" (what the hosts speak; \"auto\" is for listeners)");
        }
        lb = lb == null ? LbPolicy.WEIGHTED_ROUND_ROBIN : lb;
        hosts = Checks.list(hosts);
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < hosts.size(); i++) {
            if (!seen.add(hosts.get(i).address())) {
                throw new ConfigException("hosts[" + i + "].address", hosts.get(i).address(), "an address not listed twice in the cluster");
            }
        }
        connectTimeout = connectTimeout == null ? DEFAULT_CONNECT_TIMEOUT : Checks.positive("connect_timeout", connectTimeout);
        responseTimeout = responseTimeout == null ? DEFAULT_RESPONSE_TIMEOUT : Checks.positive("response_timeout", responseTimeout);
        pool = pool == null ? PoolConfig.defaults() : pool;
        hashLb = hashLb == null ? HashLbConfig.defaults() : hashLb;
        Checks.range("panic_threshold", panicThreshold, 0, 100);
        Checks.range("least_request_choices", leastRequestChoices, 2, 100);
        if (!(activeRequestBias >= 0) || Double.isInfinite(activeRequestBias)) {
            throw new ConfigException("active_request_bias", activeRequestBias, "a finite number >= 0");
        }
        circuitBreakers = circuitBreakers == null ? CircuitBreakerConfig.defaults(protocol) : circuitBreakers;
        // http2: what the hosts speak; h2c only for HTTP clusters
        upstreamProtocol = upstreamProtocol == null ? UpstreamProtocol.HTTP1 : upstreamProtocol;
        http2 = http2 == null ? UpstreamHttp2Config.defaults() : http2;
        if (upstreamProtocol != UpstreamProtocol.HTTP1 && protocol != Protocol.HTTP) {
            throw new ConfigException("upstream_protocol", upstreamProtocol.jsonName(), "\"http1\" on a Bolt cluster");
        }
        if (upstreamProtocol == UpstreamProtocol.H2C && tls != null) {
            throw new ConfigException("upstream_protocol", upstreamProtocol.jsonName(),
                    "\"h2\" or \"http1\" on a cluster with a tls block (h2c is HTTP/2 in clear text)");
        }
        if (upstreamProtocol == UpstreamProtocol.H2 && tls == null) {
            throw new ConfigException("upstream_protocol", upstreamProtocol.jsonName(),
                    "a cluster with a tls block (h2 is HTTP/2 over TLS; \"h2c\" is HTTP/2 in clear text)");
        }
    }

    /** As the canonical constructor, with the default HTTP/2 upstream options. */
    public ClusterConfig(String name, Protocol protocol, LbPolicy lb, List<HostConfig> hosts,
                         Duration connectTimeout, Duration responseTimeout, PoolConfig pool,
                         HealthCheckConfig healthCheck, SlowStartConfig slowStart, OutlierConfig outlier,
                         int panicThreshold, boolean warmUpAtBoot, int leastRequestChoices, double activeRequestBias,
                         UpstreamTlsConfig tls, HashLbConfig hashLb, RetryPolicyConfig retryPolicy,
                         CircuitBreakerConfig circuitBreakers, DiscoveryConfig discovery, ClusterHeaders headers,
                         UpstreamProtocol upstreamProtocol) {
        this(name, protocol, lb, hosts, connectTimeout, responseTimeout, pool, healthCheck, slowStart, outlier,
                panicThreshold, warmUpAtBoot, leastRequestChoices, activeRequestBias, tls, hashLb, retryPolicy,
                circuitBreakers, discovery, headers, upstreamProtocol, null);
    }

    /** As the canonical constructor, without header rules, HTTP/1.1 to the hosts. */
    public ClusterConfig(String name, Protocol protocol, LbPolicy lb, List<HostConfig> hosts,
                         Duration connectTimeout, Duration responseTimeout, PoolConfig pool,
                         HealthCheckConfig healthCheck, SlowStartConfig slowStart, OutlierConfig outlier,
                         int panicThreshold, boolean warmUpAtBoot, int leastRequestChoices, double activeRequestBias,
                         UpstreamTlsConfig tls, HashLbConfig hashLb, RetryPolicyConfig retryPolicy,
                         CircuitBreakerConfig circuitBreakers, DiscoveryConfig discovery) {
        this(name, protocol, lb, hosts, connectTimeout, responseTimeout, pool, healthCheck, slowStart, outlier,
                panicThreshold, warmUpAtBoot, leastRequestChoices, activeRequestBias, tls, hashLb, retryPolicy,
                circuitBreakers, discovery, null, null);
    }

    /** Static hosts, cleartext, default hash sizes, no retry policy, the default circuit breakers, no header rules. */
    public ClusterConfig(String name, Protocol protocol, LbPolicy lb, List<HostConfig> hosts,
                         Duration connectTimeout, Duration responseTimeout, PoolConfig pool,
                         HealthCheckConfig healthCheck, SlowStartConfig slowStart, OutlierConfig outlier,
                         int panicThreshold, boolean warmUpAtBoot, int leastRequestChoices, double activeRequestBias) {
        this(name, protocol, lb, hosts, connectTimeout, responseTimeout, pool, healthCheck, slowStart, outlier,
                panicThreshold, warmUpAtBoot, leastRequestChoices, activeRequestBias, null, null, null, null, null, null, null);
    }

    /** The same cluster with TLS to its hosts ({@code null}: cleartext). */
    public ClusterConfig withTls(UpstreamTlsConfig t) {
        return toBuilder().tls(t).build();
    }

    /** True when the hosts come from a {@linkplain #discovery() discovery source}, not the config. */
    public boolean discovered() {
        return discovery != null;
    }

    /** A cluster with every default: weighted round robin, no health check, no slow start. */
    public static ClusterConfig of(String name, List<HostConfig> hosts) {
        return builder().name(name).hosts(hosts).build();
    }

    /**
     * The same cluster speaking {@code p}. A {@code max_requests} at the old protocol's default
     * becomes the new protocol's default (MOSN-format clusters learn their protocol late).
     */
    public ClusterConfig withProtocol(Protocol p) {
        CircuitBreakerConfig cb = circuitBreakers;
        int oldDefault = CircuitBreakerConfig.defaults(protocol).maxRequests();
        if (cb.maxRequests() == oldDefault) {
            cb = cb.toBuilder().maxRequests(CircuitBreakerConfig.defaults(p).maxRequests()).build();
        }
        return toBuilder().protocol(p).circuitBreakers(cb).build();
    }

    public ClusterConfig withHosts(List<HostConfig> newHosts) {
        return toBuilder().hosts(newHosts).build();
    }

    public ClusterConfig withSlowStart(SlowStartConfig s) {
        return toBuilder().slowStart(s).build();
    }

    public ClusterConfig withHealthCheck(HealthCheckConfig h) {
        return toBuilder().healthCheck(h).build();
    }

    public ClusterConfig withOutlier(OutlierConfig o) {
        return toBuilder().outlier(o).build();
    }

    public ClusterConfig withLb(LbPolicy policy) {
        return toBuilder().lb(policy).build();
    }

    public ClusterConfig withTimeouts(Duration connect, Duration response) {
        return toBuilder().connectTimeout(connect).responseTimeout(response).build();
    }

    public ClusterConfig withPool(PoolConfig p) {
        return toBuilder().pool(p).build();
    }

    /** A builder with the defaults a config file gets for keys it leaves out. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this config's values. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.name = name;
        b.protocol = protocol;
        b.lb = lb;
        b.hosts = hosts;
        b.connectTimeout = connectTimeout;
        b.responseTimeout = responseTimeout;
        b.pool = pool;
        b.healthCheck = healthCheck;
        b.slowStart = slowStart;
        b.outlier = outlier;
        b.panicThreshold = panicThreshold;
        b.warmUpAtBoot = warmUpAtBoot;
        b.leastRequestChoices = leastRequestChoices;
        b.activeRequestBias = activeRequestBias;
        b.tls = tls;
        b.hashLb = hashLb;
        b.retryPolicy = retryPolicy;
        b.circuitBreakers = circuitBreakers;
        b.discovery = discovery;
        b.headers = headers;
        b.upstreamProtocol = upstreamProtocol; // http2
        b.http2 = http2;
        return b;
    }

    /**
     * Builds a {@link ClusterConfig} (defaults: HTTP, weighted round robin, no hosts, connect timeout 3 s,
     * response timeout 15 s, default pool, no health check, slow start or outlier ejection, panic
     * threshold 50 %, least-request choices 2, bias 1.0). Validation happens in the record's constructor,
     * when {@link #build()} is called.
     */
    public static final class Builder {
        private String name;
        private Protocol protocol = Protocol.HTTP;
        private LbPolicy lb = LbPolicy.WEIGHTED_ROUND_ROBIN;
        private List<HostConfig> hosts = List.of();
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private Duration responseTimeout = DEFAULT_RESPONSE_TIMEOUT;
        private PoolConfig pool = PoolConfig.defaults();
        private HealthCheckConfig healthCheck;
        private SlowStartConfig slowStart;
        private OutlierConfig outlier;
        private int panicThreshold = DEFAULT_PANIC_THRESHOLD;
        private boolean warmUpAtBoot;
        private int leastRequestChoices = 2;
        private double activeRequestBias = 1.0;
        private UpstreamTlsConfig tls;
        private HashLbConfig hashLb;
        private RetryPolicyConfig retryPolicy;
        private CircuitBreakerConfig circuitBreakers;
        private DiscoveryConfig discovery;
        private ClusterHeaders headers;
        private UpstreamProtocol upstreamProtocol; // http2
        private UpstreamHttp2Config http2;

        private Builder() {
        }

        public Builder name(String name) {
            this.name = name;
            return this;
        }

        public Builder protocol(Protocol protocol) {
            this.protocol = protocol;
            return this;
        }

        public Builder lb(LbPolicy lb) {
            this.lb = lb;
            return this;
        }

        public Builder hosts(List<HostConfig> hosts) {
            this.hosts = hosts;
            return this;
        }

        public Builder connectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
            return this;
        }

        public Builder responseTimeout(Duration responseTimeout) {
            this.responseTimeout = responseTimeout;
            return this;
        }

        public Builder pool(PoolConfig pool) {
            this.pool = pool;
            return this;
        }

        public Builder healthCheck(HealthCheckConfig healthCheck) {
            this.healthCheck = healthCheck;
            return this;
        }

        public Builder slowStart(SlowStartConfig slowStart) {
            this.slowStart = slowStart;
            return this;
        }

        public Builder outlier(OutlierConfig outlier) {
            this.outlier = outlier;
            return this;
        }

        public Builder panicThreshold(int panicThreshold) {
            this.panicThreshold = panicThreshold;
            return this;
        }

        public Builder warmUpAtBoot(boolean warmUpAtBoot) {
            this.warmUpAtBoot = warmUpAtBoot;
            return this;
        }

        public Builder leastRequestChoices(int leastRequestChoices) {
            this.leastRequestChoices = leastRequestChoices;
            return this;
        }

        public Builder activeRequestBias(double activeRequestBias) {
            this.activeRequestBias = activeRequestBias;
            return this;
        }

        /** TLS to the hosts; null (the default) = cleartext. */
        public Builder tls(UpstreamTlsConfig tls) {
            this.tls = tls;
            return this;
        }

        /** RING_HASH / MAGLEV ring and table sizes; null = defaults. */
        public Builder hashLb(HashLbConfig hashLb) {
            this.hashLb = hashLb;
            return this;
        }

        public Builder retryPolicy(RetryPolicyConfig retryPolicy) {
            this.retryPolicy = retryPolicy;
            return this;
        }

        public Builder circuitBreakers(CircuitBreakerConfig circuitBreakers) {
            this.circuitBreakers = circuitBreakers;
            return this;
        }

        public Builder discovery(DiscoveryConfig discovery) {
            this.discovery = discovery;
            return this;
        }

        /** HTTP header rules of the cluster (null: none). */
        public Builder headers(ClusterHeaders h) {
            this.headers = h;
            return this;
        }

        /** http2: what the hosts speak (HTTP/1.1 by default). */
        public Builder upstreamProtocol(UpstreamProtocol upstreamProtocol) {
            this.upstreamProtocol = upstreamProtocol;
            return this;
        }

        /** http2: options of HTTP/2 upstream connections (null: defaults). */
        public Builder http2(UpstreamHttp2Config http2) {
            this.http2 = http2;
            return this;
        }

        /** The hosts, given one by one. */
        public Builder hosts(HostConfig... hosts) {
            this.hosts = List.of(hosts);
            return this;
        }

        public ClusterConfig build() {
            return new ClusterConfig(name, protocol, lb, hosts, connectTimeout, responseTimeout, pool, healthCheck, slowStart, outlier, panicThreshold, warmUpAtBoot, leastRequestChoices, activeRequestBias, tls, hashLb, retryPolicy, circuitBreakers, discovery, headers, upstreamProtocol, http2);
        }
    }
}
