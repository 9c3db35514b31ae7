package io.sluice.core.config;

import java.time.Duration;
import java.util.List;

/**
 * The Nacos part of a {@code discovery} block of {@code type: "nacos"} (docs/discovery.md, docs/config.md).
 *
 * @param namespace    the Nacos namespace id; default {@code sofa-rpc} (SOFARPC's Nacos registry default);
 *                     {@code ""} or {@code public} = Nacos's public namespace
 * @param group        the Nacos group; default {@code DEFAULT_GROUP}
 * @param clusters     the Nacos clusters whose instances are used; default {@code ["default-cluster"]} (SOFARPC's);
 *                     an empty list = every cluster
 * @param serviceName  the Nacos service name; null = derived from {@code service} the way SOFARPC names it
 *                     ({@code interface[:uniqueId]:DEFAULT} for bolt/tr, else {@code interface[:uniqueId]:protocol})
 * @param pollInterval how often the instance list is asked for (and the retry interval while Nacos is unreachable); default 2 s
 * @param username     Nacos user when the server has authentication on (null = none)
 * @param password     its password
 * @param healthyOnly  true (default) = instances Nacos marks unhealthy get no traffic
 */
public record NacosOptions(String namespace, String group, List<String> clusters, String serviceName,
                           Duration pollInterval, String username, String password, boolean healthyOnly) {

    public static final String DEFAULT_NAMESPACE = "sofa-rpc";
    public static final String DEFAULT_GROUP = "DEFAULT_GROUP";
    public static final String DEFAULT_CLUSTER = "default-cluster";
    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(2);

    public NacosOptions {
        namespace = namespace == null ? DEFAULT_NAMESPACE : namespace.trim();
        group = group == null ? DEFAULT_GROUP : Checks.notBlank("group", group).trim();
        clusters = clusters == null ? List.of(DEFAULT_CLUSTER) : List.copyOf(clusters);
        for (String c : clusters) {
            if (c == null || c.isBlank() || c.indexOf(',') >= 0) {
                throw new ConfigException("clusters", String.valueOf(c), "a Nacos cluster name without ','");
            }
        }
        if (serviceName != null) {
            Checks.notBlank("service_name", serviceName);
        }
        pollInterval = pollInterval == null ? DEFAULT_POLL_INTERVAL : Checks.positive("poll_interval", pollInterval);
        if (pollInterval.toMillis() < 100) {
            throw new ConfigException("poll_interval", DurationFormat.format(pollInterval), "at least 100ms");
        }
        if ((username == null) != (password == null)) {
            throw new ConfigException(username == null ? "username" : "password", "(missing)",
                    "username and password together (or neither)");
        }
    }

    /** Every default: namespace {@code sofa-rpc}, {@code DEFAULT_GROUP}, cluster {@code default-cluster}, poll 2 s, healthy only. */
    public static NacosOptions defaults() {
        return new NacosOptions(null, null, null, null, null, null, null, true);
    }

    public NacosOptions withNamespace(String ns) {
        return new NacosOptions(ns, group, clusters, serviceName, pollInterval, username, password, healthyOnly);
    }

    public NacosOptions withPollInterval(Duration d) {
        return new NacosOptions(namespace, group, clusters, serviceName, d, username, password, healthyOnly);
    }

    public NacosOptions withServiceName(String s) {
        return new NacosOptions(namespace, group, clusters, s, pollInterval, username, password, healthyOnly);
    }

    public NacosOptions withClusters(List<String> c) {
        return new NacosOptions(namespace, group, c, serviceName, pollInterval, username, password, healthyOnly);
    }

    public NacosOptions withCredentials(String user, String pass) {
        return new NacosOptions(namespace, group, clusters, serviceName, pollInterval, user, pass, healthyOnly);
    }

    public NacosOptions withHealthyOnly(boolean h) {
        return new NacosOptions(namespace, group, clusters, serviceName, pollInterval, username, password, h);
    }

    /** Never prints the password. */
    @Override
    public String toString() {
        return "NacosOptions[namespace=" + namespace + ", group=" + group + ", clusters=" + clusters + ", serviceName="
                + serviceName + ", pollInterval=" + pollInterval + ", username=" + username
                + ", password=" + (password == null ? null : "***") + ", healthyOnly=" + healthyOnly + "]";
    }
}
