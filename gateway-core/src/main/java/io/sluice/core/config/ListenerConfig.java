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
 * @param tls                     downstream TLS; null = cleartext
 */
public record ListenerConfig(String name, Protocol protocol, String address, int port, List<RouteConfig> routes,
                             HttpOptions http, BoltOptions bolt, int maxConnections, int maxConnectionsPerClient,
                             TlsConfig tls) {

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

    /** A cleartext listener. */
    public ListenerConfig(String name, Protocol protocol, String address, int port, List<RouteConfig> routes,
                          HttpOptions http, BoltOptions bolt, int maxConnections, int maxConnectionsPerClient) {
        this(name, protocol, address, port, routes, http, bolt, maxConnections, maxConnectionsPerClient, null);
    }

    /** A listener with the default connection limits. */
    public ListenerConfig(String name, Protocol protocol, String address, int port, List<RouteConfig> routes,
                          HttpOptions http, BoltOptions bolt) {
        this(name, protocol, address, port, routes, http, bolt, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_CLIENT);
    }

    public static ListenerConfig http(String name, String address, int port, List<RouteConfig> routes) {
        return builder().name(name).address(address).port(port).routes(routes).build();
    }

    public ListenerConfig withPort(int newPort) {
        return toBuilder().port(newPort).build();
    }

    public ListenerConfig withRoutes(List<RouteConfig> newRoutes) {
        return toBuilder().routes(newRoutes).build();
    }

    public ListenerConfig withHttp(HttpOptions options) {
        return toBuilder().http(options).build();
    }

    public ListenerConfig withConnectionLimits(int max, int perClient) {
        return toBuilder().maxConnections(max).maxConnectionsPerClient(perClient).build();
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
        b.address = address;
        b.port = port;
        b.routes = routes;
        b.http = http;
        b.bolt = bolt;
        b.maxConnections = maxConnections;
        b.maxConnectionsPerClient = maxConnectionsPerClient;
        b.tls = tls;
        return b;
    }

    /**
     * Builds a {@link ListenerConfig} (defaults: HTTP on 127.0.0.1, port 0 = any free port, no routes,
     * default HTTP and Bolt options; a config file must name its port). Validation happens in the record's
     * constructor, when {@link #build()} is called.
     */
    public static final class Builder {
        private String name;
        private Protocol protocol = Protocol.HTTP;
        private String address = "127.0.0.1";
        private int port;
        private List<RouteConfig> routes = List.of();
        private HttpOptions http = HttpOptions.defaults();
        private BoltOptions bolt = BoltOptions.defaults();
        private int maxConnections = DEFAULT_MAX_CONNECTIONS;
        private int maxConnectionsPerClient = DEFAULT_MAX_CONNECTIONS_PER_CLIENT;
        private TlsConfig tls;

        private Builder() {
        }

        /** Downstream TLS (null = cleartext). */
        public Builder tls(TlsConfig tls) {
            this.tls = tls;
            return this;
        }

        public Builder name(String name) {
            this.name = name;
            return this;
        }

        public Builder protocol(Protocol protocol) {
            this.protocol = protocol;
            return this;
        }

        public Builder address(String address) {
            this.address = address;
            return this;
        }

        public Builder port(int port) {
            this.port = port;
            return this;
        }

        public Builder routes(List<RouteConfig> routes) {
            this.routes = routes;
            return this;
        }

        public Builder http(HttpOptions http) {
            this.http = http;
            return this;
        }

        public Builder bolt(BoltOptions bolt) {
            this.bolt = bolt;
            return this;
        }

        /** The routes, given one by one (first match wins). */
        public Builder routes(RouteConfig... routes) {
            this.routes = List.of(routes);
            return this;
        }

        public Builder maxConnections(int maxConnections) {
            this.maxConnections = maxConnections;
            return this;
        }

        public Builder maxConnectionsPerClient(int maxConnectionsPerClient) {
            this.maxConnectionsPerClient = maxConnectionsPerClient;
            return this;
        }

        public ListenerConfig build() {
            return new ListenerConfig(name, protocol, address, port, routes, http, bolt, maxConnections,
                    maxConnectionsPerClient, tls);
        }
    }
}
