package io.sluice.core.config;

/**
 * One upstream address with its configured weight. The load balancer clamps the weight into
 * [1, 128] before applying any dynamic factor; 0 therefore behaves as 1.
 *
 * @param host   IP address or host name
 * @param port   TCP port, 1..65535
 * @param weight configured weight, 0..10000 (values above 128 behave as 128)
 */
public record HostConfig(String host, int port, int weight) {

    public HostConfig {
        Checks.notBlank("host", host);
        Checks.range("port", port, 1, 65535);
        Checks.range("weight", weight, 0, 10_000);
    }

    /** Parses {@code "127.0.0.1:8080"} (or {@code "[::1]:8080"}). */
    public static HostConfig parse(String address, int weight) {
        if (address == null) {
            throw new ConfigException("address", null, "\"host:port\"");
        }
        int colon = address.lastIndexOf(':');
        if (colon <= 0 || colon == address.length() - 1) {
            throw new ConfigException("address", address, "\"host:port\", e.g. \"127.0.0.1:8080\"");
        }
        String h = address.substring(0, colon);
        if (h.startsWith("[") && h.endsWith("]")) {
            h = h.substring(1, h.length() - 1);
        }
        int p;
        try {
            p = Integer.parseInt(address.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new ConfigException("address", address, "\"host:port\" with a numeric port");
        }
        if (p < 1 || p > 65535) {
            throw new ConfigException("address", address, "a port in [1, 65535]");
        }
        return new HostConfig(h, p, weight);
    }

    /** {@code host:port}, the identity of a host across reloads. */
    public String address() {
        return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
    }
}
