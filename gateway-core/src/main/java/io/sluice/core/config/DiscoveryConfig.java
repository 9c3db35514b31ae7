package io.sluice.core.config;

import java.time.Duration;
import java.util.Locale;

/**
 * Where a cluster's hosts come from when a source other than the config file feeds them
 * ({@code discovery} in docs/config.md and docs/discovery.md).
 *
 * @param type              {@code zookeeper} (a SOFARPC ZooKeeper registry) or {@code custom} (an
 *                          embedder's {@code HostSource} registered under {@code source})
 * @param address           zookeeper: the connect string {@code host:port[,host:port...][/root]}, the
 *                          root path as SOFARPC's {@code RegistryConfig.address} takes it
 * @param service           zookeeper: {@code interface:version[:uniqueId]}, the Bolt {@code service} header
 * @param protocol          zookeeper: providers of this protocol only (default {@code bolt})
 * @param source            custom: the name the embedder registered its source under
 * @param sessionTimeout    zookeeper: requested session timeout (the server may shorten it)
 * @param connectionTimeout zookeeper: connection timeout
 * @param allowEmpty        false (default) = an empty provider list while connected keeps the last
 *                          non-empty set (an operator mistake or the SOFARPC re-registration bug must not
 *                          take a live service to zero); true = the cluster goes empty (requests fail fast)
 * @param flapGrace         a provider gone and back within this keeps its warm-up clock when the source
 *                          gives no start time; default 30 s
 */
public record DiscoveryConfig(String type, String address, String service, String protocol, String source,
                              Duration sessionTimeout, Duration connectionTimeout, boolean allowEmpty,
                              Duration flapGrace) {

    public static final String ZOOKEEPER = "zookeeper";
    public static final String CUSTOM = "custom";
    public static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration DEFAULT_FLAP_GRACE = Duration.ofSeconds(30);

    public DiscoveryConfig {
        type = Checks.notBlank("type", type).toLowerCase(Locale.ROOT);
        protocol = protocol == null || protocol.isBlank() ? "bolt" : protocol.toLowerCase(Locale.ROOT);
        sessionTimeout = sessionTimeout == null ? DEFAULT_SESSION_TIMEOUT : Checks.positive("session_timeout", sessionTimeout);
        connectionTimeout = connectionTimeout == null ? DEFAULT_CONNECTION_TIMEOUT
                : Checks.positive("connection_timeout", connectionTimeout);
        flapGrace = flapGrace == null ? DEFAULT_FLAP_GRACE : Checks.nonNegative("flap_grace", flapGrace);
        switch (type) {
            case ZOOKEEPER -> {
                Checks.notBlank("address", address);
                Checks.notBlank("service", service);
                if (service.indexOf(':') <= 0) {
                    throw new ConfigException("service", service,
                            "\"interface:version[:uniqueId]\", e.g. \"com.example.EchoService:1.0\"");
                }
            }
            case CUSTOM -> Checks.notBlank("source", source);
            default -> throw new ConfigException("type", type, "\"zookeeper\" or \"custom\"");
        }
    }

    /** A SOFARPC ZooKeeper registry source with every default. */
    public static DiscoveryConfig zookeeper(String address, String service) {
        return new DiscoveryConfig(ZOOKEEPER, address, service, null, null, null, null, false, null);
    }

    /** An embedder's source registered as {@code name} ({@code Gateway.builder().hostSource(name, ...)}). */
    public static DiscoveryConfig custom(String name) {
        return new DiscoveryConfig(CUSTOM, null, null, null, name, null, null, false, null);
    }

    public DiscoveryConfig withAllowEmpty(boolean allow) {
        return new DiscoveryConfig(type, address, service, protocol, source, sessionTimeout, connectionTimeout, allow, flapGrace);
    }

    public DiscoveryConfig withSessionTimeout(Duration d) {
        return new DiscoveryConfig(type, address, service, protocol, source, d, connectionTimeout, allowEmpty, flapGrace);
    }

    public DiscoveryConfig withFlapGrace(Duration d) {
        return new DiscoveryConfig(type, address, service, protocol, source, sessionTimeout, connectionTimeout, allowEmpty, d);
    }
}
