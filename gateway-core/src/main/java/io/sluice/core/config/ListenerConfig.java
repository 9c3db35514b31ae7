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
 */
public record ListenerConfig(String name, Protocol protocol, String address, int port, List<RouteConfig> routes,
                             HttpOptions http, BoltOptions bolt) {

    public ListenerConfig {
        Checks.notBlank("name", name);
        protocol = protocol == null ? Protocol.HTTP : protocol;
        address = address == null ? "127.0.0.1" : Checks.notBlank("address", address);
        Checks.range("port", port, 0, 65535);
        routes = Checks.list(routes);
        http = http == null ? HttpOptions.defaults() : http;
        bolt = bolt == null ? BoltOptions.defaults() : bolt;
    }

    public static ListenerConfig http(String name, String address, int port, List<RouteConfig> routes) {
        return new ListenerConfig(name, Protocol.HTTP, address, port, routes, null, null);
    }

    public ListenerConfig withPort(int newPort) {
        return new ListenerConfig(name, protocol, address, newPort, routes, http, bolt);
    }

    public ListenerConfig withRoutes(List<RouteConfig> newRoutes) {
        return new ListenerConfig(name, protocol, address, port, newRoutes, http, bolt);
    }

    public ListenerConfig withHttp(HttpOptions options) {
        return new ListenerConfig(name, protocol, address, port, routes, options, bolt);
    }
}
