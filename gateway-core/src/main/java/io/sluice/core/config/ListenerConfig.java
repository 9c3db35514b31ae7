package io.sluice.core.config;

import java.util.List;

/**
 * A socket the gateway accepts clients on, and how it routes their requests.
 *
 * @param name     unique listener name (metrics tag)
 * @param protocol what clients speak
 * @param address  bind address (e.g. "127.0.0.1", "0.0.0.0")
 * @param port     bind port (0 = any free port, useful in tests and embedding)
 * @param routes   routing rules, first match wins
 * @param http     HTTP options (HTTP listeners)
 * @param bolt     Bolt options (Bolt listeners)
 * @param maxConnections          open client connections at which the listener refuses more (closes
 *                                them at accept); 0 = no limit
 * @param maxConnectionsPerClient open connections from one client IP address at which more from it
 *                                are refused; 0 = no limit
 */
public record ListenerConfig(String name, Protocol protocol, String address, int port, List<RouteConfig> routes,
                             HttpOptions http, BoltOptions bolt, int maxConnections, int maxConnectionsPerClient) {

    /** Default {@code max_connections}: two file descriptors each (client and upstream) stay well under a 65 536 fd limit. */
    public static final int DEFAULT_MAX_CONNECTIONS = 16_384;
    /** Default {@code max_connections_per_client}: off (clients behind NAT, load balancers and sidecars share an address). */
    public static final int DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 0;

    public ListenerConfig {
        Checks.notBlank("name", name);
        protocol = protocol == null ? Protocol.HTTP : protocol;
        address = address == null ? "127.0.0.1" : Checks.notBlank("address", address);
        Checks.range("port", port, 0, 65535);
        routes = Checks.list(routes);
        http = http == null ? HttpOptions.defaults() : http;
        bolt = bolt == null ? BoltOptions.defaults() : bolt;
        Checks.range("max_connections", maxConnections, 0, Integer.MAX_VALUE);
        Checks.range("max_connections_per_client", maxConnectionsPerClient, 0, Integer.MAX_VALUE);
    }

    /** A listener with the default connection limits. */
    public ListenerConfig(String name, Protocol protocol, String address, int port, List<RouteConfig> routes,
                          HttpOptions http, BoltOptions bolt) {
        this(name, protocol, address, port, routes, http, bolt, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_CLIENT);
    }

    public static ListenerConfig http(String name, String address, int port, List<RouteConfig> routes) {
        return new ListenerConfig(name, Protocol.HTTP, address, port, routes, null, null);
    }

    public ListenerConfig withPort(int newPort) {
        return new ListenerConfig(name, protocol, address, newPort, routes, http, bolt, maxConnections, maxConnectionsPerClient);
    }

    public ListenerConfig withRoutes(List<RouteConfig> newRoutes) {
        return new ListenerConfig(name, protocol, address, port, newRoutes, http, bolt, maxConnections, maxConnectionsPerClient);
    }

    public ListenerConfig withHttp(HttpOptions options) {
        return new ListenerConfig(name, protocol, address, port, routes, options, bolt, maxConnections, maxConnectionsPerClient);
    }

    public ListenerConfig withConnectionLimits(int max, int perClient) {
        return new ListenerConfig(name, protocol, address, port, routes, http, bolt, max, perClient);
    }
}
