package io.sluice.core.config;

import java.time.Duration;
import java.util.Locale;

/**
 * Where a cluster's hosts come from when a source other than the config file feeds them
 * ({@code discovery} in docs/config.md and docs/discovery.md).
 *
 * @param type              {@code zookeeper} (a SOFARPC ZooKeeper registry), {@code dns} (every A/AAAA record
 *                          of a name, Envoy's STRICT_DNS) or {@code custom} (an embedder's {@code HostSource}
 *                          registered under {@code source})
 * @param address           zookeeper: the connect string {@code host:port[,host:port...][/root]}, the
 *                          root path as SOFARPC's {@code RegistryConfig.address} takes it; dns: {@code name:port}
 * @param service           zookeeper: {@code interface:version[:uniqueId]}, the Bolt {@code service} header;
 *                          {@code "*"} = route by registry: a Bolt listener whose default cluster this is sends
 *                          each request without a route to a cluster discovered for its {@code service} on
 *                          first use (at most {@code maxServices}, dropped after {@code idleTimeout} unused)
 * @param protocol          zookeeper: providers of this protocol only (default {@code bolt})
 * @param source            custom: the name the embedder registered its source under
 * @param sessionTimeout    zookeeper: requested session timeout (the server may shorten it)
 * @param connectionTimeout zookeeper: connection timeout; dns: the query timeout
 * @param allowEmpty        false (default) = an empty provider list while connected keeps the last
 *                          non-empty set (an operator mistake or the SOFARPC re-registration bug must not
 *                          take a live service to zero); true = the cluster goes empty (requests fail fast)
 * @param flapGrace         a provider gone and back within this keeps its warm-up clock when the source
 *                          gives no start time; default 30 s
 * @param dnsServer         dns: the server to ask ({@code ip:port}); null = the system's resolv.conf
 * @param refreshMin        dns: the shortest re-resolution interval (a record's TTL below it counts as it);
 *                          also the first retry after a failure. Default 1 s
 * @param maxServices       service "*": how many services may be discovered at once (default 64)
 * @param idleTimeout       service "*": a discovered service unused this long is dropped (default 10 min)
 * @param refreshMax        dns: the longest re-resolution interval (TTLs above it, and the cap of the
 *                          failure backoff). Default 60 s
 * @param initialFetchTimeout discovery: how long the admin {@code /ready} waits (503) at start for the source's first
 *                          host list; after it the gateway reports ready with the configured hosts and says so.
 *                          Default 5 s; 0 = do not wait
 * @param nacos             nacos: namespace, group, clusters, poll interval, credentials (null for other types;
 *                          {@link NacosOptions#defaults()} when a nacos block gives none)
 */
public record DiscoveryConfig(String type, String address, String service, String protocol, String source,
                              Duration sessionTimeout, Duration connectionTimeout, boolean allowEmpty,
                              Duration flapGrace, String dnsServer, Duration refreshMin, Duration refreshMax,
                              int maxServices, Duration idleTimeout, Duration initialFetchTimeout, NacosOptions nacos) {

    public static final String ZOOKEEPER = "zookeeper";
    /** A SOFARPC (or any) service in a Nacos naming registry, read over Nacos's HTTP open API. */
    public static final String NACOS = "nacos";
    public static final String CUSTOM = "custom";
    public static final String DNS = "dns";
    public static final Duration DEFAULT_REFRESH_MIN = Duration.ofSeconds(1);
    public static final Duration DEFAULT_REFRESH_MAX = Duration.ofSeconds(60);
    public static final String ANY_SERVICE = "*";
    public static final int DEFAULT_MAX_SERVICES = 64;
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofMinutes(10);
    public static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration DEFAULT_FLAP_GRACE = Duration.ofSeconds(30);

    /** discovery: default of {@code initial_fetch_timeout}. */
    public static final Duration DEFAULT_INITIAL_FETCH_TIMEOUT = Duration.ofSeconds(5);

    /** Without {@code initial_fetch_timeout} (default 5 s). */
    public DiscoveryConfig(String type, String address, String service, String protocol, String source,
                           Duration sessionTimeout, Duration connectionTimeout, boolean allowEmpty,
                           Duration flapGrace, String dnsServer, Duration refreshMin, Duration refreshMax,
                           int maxServices, Duration idleTimeout) {
        this(type, address, service, protocol, source, sessionTimeout, connectionTimeout, allowEmpty, flapGrace, dnsServer,
                refreshMin, refreshMax, maxServices, idleTimeout, null);
    }

    /** Without Nacos options (every type but {@code nacos}; a nacos source gets the defaults). */
    public DiscoveryConfig(String type, String address, String service, String protocol, String source,
                           Duration sessionTimeout, Duration connectionTimeout, boolean allowEmpty,
                           Duration flapGrace, String dnsServer, Duration refreshMin, Duration refreshMax,
                           int maxServices, Duration idleTimeout, Duration initialFetchTimeout) {
        this(type, address, service, protocol, source, sessionTimeout, connectionTimeout, allowEmpty, flapGrace, dnsServer,
                refreshMin, refreshMax, maxServices, idleTimeout, initialFetchTimeout, null);
    }

    public DiscoveryConfig {
        initialFetchTimeout = initialFetchTimeout == null ? DEFAULT_INITIAL_FETCH_TIMEOUT
                : Checks.nonNegative("initial_fetch_timeout", initialFetchTimeout);
        type = Checks.notBlank("type", type).toLowerCase(Locale.ROOT);
        protocol = protocol == null || protocol.isBlank() ? "bolt" : protocol.toLowerCase(Locale.ROOT);
        sessionTimeout = sessionTimeout == null ? DEFAULT_SESSION_TIMEOUT : Checks.positive("session_timeout", sessionTimeout);
        connectionTimeout = connectionTimeout == null ? DEFAULT_CONNECTION_TIMEOUT
                : Checks.positive("connection_timeout", connectionTimeout);
        flapGrace = flapGrace == null ? DEFAULT_FLAP_GRACE : Checks.nonNegative("flap_grace", flapGrace);
        refreshMin = refreshMin == null ? DEFAULT_REFRESH_MIN : Checks.positive("refresh_min", refreshMin);
        refreshMax = refreshMax == null ? DEFAULT_REFRESH_MAX : Checks.positive("refresh_max", refreshMax);
        maxServices = maxServices == 0 ? DEFAULT_MAX_SERVICES : Checks.range("max_services", maxServices, 1, 10_000);
        idleTimeout = idleTimeout == null ? DEFAULT_IDLE_TIMEOUT : Checks.positive("idle_timeout", idleTimeout);
        if (refreshMax.compareTo(refreshMin) < 0) {
            throw new ConfigException("refresh_max", DurationFormat.format(refreshMax), "at least refresh_min ("
                    + DurationFormat.format(refreshMin) + ")");
        }
        switch (type) {
            case ZOOKEEPER -> {
                Checks.notBlank("address", address);
                Checks.notBlank("service", service);
                if (!ANY_SERVICE.equals(service) && service.indexOf(':') <= 0) {
                    throw new ConfigException("service", service,
                            "\"interface:version[:uniqueId]\", e.g. \"com.example.EchoService:1.0\", or \"*\" (route by registry)");
                }
            }
            case NACOS -> {
                Checks.notBlank("address", address);
                nacos = nacos == null ? NacosOptions.defaults() : nacos;
                for (String server : address.split(",")) {
                    try {
                        HostConfig.parse(server.trim(), 1);
                    } catch (ConfigException e) {
                        throw new ConfigException("address", address, "\"host:port[,host:port...]\", e.g. \"nacos1:8848,nacos2:8848\"");
                    }
                }
                Checks.notBlank("service", service);
                if (ANY_SERVICE.equals(service) && nacos.serviceName() != null) {
                    throw new ConfigException("service_name", nacos.serviceName(),
                            "no service_name with service \"*\" (each service's Nacos name is derived from its header)");
                }
                if (!ANY_SERVICE.equals(service) && service.indexOf(':') <= 0 && nacos.serviceName() == null) {
                    throw new ConfigException("service", service,
                            "\"interface:version[:uniqueId]\", e.g. \"com.example.EchoService:1.0\", or \"*\" (route by registry)");
                }
            }
            case CUSTOM -> Checks.notBlank("source", source);
            case DNS -> {
                HostConfig.parse(address, 1); // name:port
                if (dnsServer != null) {
                    try {
                        HostConfig.parse(dnsServer, 1);
                    } catch (ConfigException e) {
                        throw new ConfigException("dns_server", dnsServer, "\"ip:port\", e.g. \"10.0.0.2:53\"");
                    }
                }
            }
            default -> throw new ConfigException("type", type, "\"zookeeper\", \"nacos\", \"dns\" or \"custom\"");
        }
        if (nacos != null && !NACOS.equals(type)) {
            throw new ConfigException("type", type, "\"nacos\" (the Nacos keys are set)");
        }
    }

    /** A SOFARPC ZooKeeper registry source with every default. */
    public static DiscoveryConfig zookeeper(String address, String service) {
        return new DiscoveryConfig(ZOOKEEPER, address, service, null, null, null, null, false, null, null, null, null, 0, null);
    }

    /** A Nacos registry source ({@code servers} = {@code host:port[,host:port...]}) for a SOFARPC service header. */
    public static DiscoveryConfig nacos(String servers, String service, NacosOptions options) {
        return new DiscoveryConfig(NACOS, servers, service, null, null, null, null, false, null, null, null, null, 0, null,
                null, options);
    }

    /** An embedder's source registered as {@code name} ({@code Gateway.builder().hostSource(name, ...)}). */
    public static DiscoveryConfig custom(String name) {
        return new DiscoveryConfig(CUSTOM, null, null, null, name, null, null, false, null, null, null, null, 0, null);
    }

    /** Every A/AAAA record of {@code nameAndPort} ({@code "svc.example.com:8080"}), asked from {@code server} (null: the system's). */
    public static DiscoveryConfig dns(String nameAndPort, String server) {
        return new DiscoveryConfig(DNS, nameAndPort, null, null, null, null, null, false, null, server, null, null, 0, null);
    }

    /** The same source for one service (route by registry: a template's child). */
    public DiscoveryConfig withService(String s) {
        return new DiscoveryConfig(type, address, s, protocol, source, sessionTimeout, connectionTimeout, allowEmpty,
                flapGrace, dnsServer, refreshMin, refreshMax, maxServices, idleTimeout, initialFetchTimeout, nacos);
    }

    public DiscoveryConfig withServiceLimits(int max, Duration idle) {
        return new DiscoveryConfig(type, address, service, protocol, source, sessionTimeout, connectionTimeout, allowEmpty,
                flapGrace, dnsServer, refreshMin, refreshMax, max, idle, initialFetchTimeout, nacos);
    }

    /** True for {@code service: "*"}: clusters per service are discovered on first use. */
    public boolean routesByService() {
        return (ZOOKEEPER.equals(type) || NACOS.equals(type)) && ANY_SERVICE.equals(service);
    }

    public DiscoveryConfig withRefresh(Duration min, Duration max) {
        return new DiscoveryConfig(type, address, service, protocol, source, sessionTimeout, connectionTimeout, allowEmpty,
                flapGrace, dnsServer, min, max, maxServices, idleTimeout, initialFetchTimeout, nacos);
    }

    public DiscoveryConfig withAllowEmpty(boolean allow) {
        return new DiscoveryConfig(type, address, service, protocol, source, sessionTimeout, connectionTimeout, allow, flapGrace, dnsServer, refreshMin, refreshMax, maxServices, idleTimeout, initialFetchTimeout, nacos);
    }

    public DiscoveryConfig withSessionTimeout(Duration d) {
        return new DiscoveryConfig(type, address, service, protocol, source, d, connectionTimeout, allowEmpty, flapGrace, dnsServer, refreshMin, refreshMax, maxServices, idleTimeout, initialFetchTimeout, nacos);
    }

    public DiscoveryConfig withInitialFetchTimeout(Duration d) {
        return new DiscoveryConfig(type, address, service, protocol, source, sessionTimeout, connectionTimeout, allowEmpty,
                flapGrace, dnsServer, refreshMin, refreshMax, maxServices, idleTimeout, d, nacos);
    }

    public DiscoveryConfig withNacos(NacosOptions n) {
        return new DiscoveryConfig(type, address, service, protocol, source, sessionTimeout, connectionTimeout, allowEmpty,
                flapGrace, dnsServer, refreshMin, refreshMax, maxServices, idleTimeout, initialFetchTimeout, n);
    }

    public DiscoveryConfig withConnectionTimeout(Duration d) {
        return new DiscoveryConfig(type, address, service, protocol, source, sessionTimeout, d, allowEmpty,
                flapGrace, dnsServer, refreshMin, refreshMax, maxServices, idleTimeout, initialFetchTimeout, nacos);
    }

    public DiscoveryConfig withFlapGrace(Duration d) {
        return new DiscoveryConfig(type, address, service, protocol, source, sessionTimeout, connectionTimeout, allowEmpty, d, dnsServer, refreshMin, refreshMax, maxServices, idleTimeout, initialFetchTimeout, nacos);
    }
}
