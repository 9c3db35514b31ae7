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
 */
public record ClusterConfig(String name, Protocol protocol, LbPolicy lb, List<HostConfig> hosts,
                            Duration connectTimeout, Duration responseTimeout, PoolConfig pool,
                            HealthCheckConfig healthCheck, SlowStartConfig slowStart, OutlierConfig outlier,
                            int panicThreshold, boolean warmUpAtBoot,
                            int leastRequestChoices, double activeRequestBias) {

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
        Checks.range("panic_threshold", panicThreshold, 0, 100);
        Checks.range("least_request_choices", leastRequestChoices, 2, 100);
        if (!(activeRequestBias >= 0) || Double.isInfinite(activeRequestBias)) {
            throw new ConfigException("active_request_bias", activeRequestBias, "a finite number >= 0");
        }
    }

    /** A cluster with every default: weighted round robin, no health check, no slow start. */
    public static ClusterConfig of(String name, List<HostConfig> hosts) {
        return new ClusterConfig(name, Protocol.HTTP, LbPolicy.WEIGHTED_ROUND_ROBIN, hosts, null, null, null,
                null, null, null, DEFAULT_PANIC_THRESHOLD, false, 2, 1.0);
    }

    public ClusterConfig withProtocol(Protocol p) {
        return new ClusterConfig(name, p, lb, hosts, connectTimeout, responseTimeout, pool, healthCheck,
                slowStart, outlier, panicThreshold, warmUpAtBoot, leastRequestChoices, activeRequestBias);
    }

    public ClusterConfig withHosts(List<HostConfig> newHosts) {
        return new ClusterConfig(name, protocol, lb, newHosts, connectTimeout, responseTimeout, pool, healthCheck,
                slowStart, outlier, panicThreshold, warmUpAtBoot, leastRequestChoices, activeRequestBias);
    }

    public ClusterConfig withSlowStart(SlowStartConfig s) {
        return new ClusterConfig(name, protocol, lb, hosts, connectTimeout, responseTimeout, pool, healthCheck,
                s, outlier, panicThreshold, warmUpAtBoot, leastRequestChoices, activeRequestBias);
    }

    public ClusterConfig withHealthCheck(HealthCheckConfig h) {
        return new ClusterConfig(name, protocol, lb, hosts, connectTimeout, responseTimeout, pool, h,
                slowStart, outlier, panicThreshold, warmUpAtBoot, leastRequestChoices, activeRequestBias);
    }

    public ClusterConfig withOutlier(OutlierConfig o) {
        return new ClusterConfig(name, protocol, lb, hosts, connectTimeout, responseTimeout, pool, healthCheck,
                slowStart, o, panicThreshold, warmUpAtBoot, leastRequestChoices, activeRequestBias);
    }

    public ClusterConfig withLb(LbPolicy policy) {
        return new ClusterConfig(name, protocol, policy, hosts, connectTimeout, responseTimeout, pool, healthCheck,
                slowStart, outlier, panicThreshold, warmUpAtBoot, leastRequestChoices, activeRequestBias);
    }

    public ClusterConfig withTimeouts(Duration connect, Duration response) {
        return new ClusterConfig(name, protocol, lb, hosts, connect, response, pool, healthCheck,
                slowStart, outlier, panicThreshold, warmUpAtBoot, leastRequestChoices, activeRequestBias);
    }

    public ClusterConfig withPool(PoolConfig p) {
        return new ClusterConfig(name, protocol, lb, hosts, connectTimeout, responseTimeout, p, healthCheck,
                slowStart, outlier, panicThreshold, warmUpAtBoot, leastRequestChoices, activeRequestBias);
    }
}
