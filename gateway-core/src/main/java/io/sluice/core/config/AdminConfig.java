package io.sluice.core.config;

/**
 * The admin listener (metrics, cluster state, reload). A config file gets {@link #defaults()}
 * (on, 127.0.0.1:34901) unless it says otherwise; a {@link GatewayConfig} built in code has none
 * unless given one.
 *
 * @param metrics record metrics (default true); false records nothing on the data path (to
 *                measure what recording costs, or when nobody scrapes) and {@code /metrics} answers 404
 */
public record AdminConfig(boolean enabled, String address, int port, boolean metrics) {

    public static final int DEFAULT_PORT = 34901;

    public AdminConfig {
        address = address == null ? "127.0.0.1" : address;
        Checks.range("port", port, 0, 65535);
    }

    /** With metrics recorded. */
    public AdminConfig(boolean enabled, String address, int port) {
        this(enabled, address, port, true);
    }

    public static AdminConfig defaults() {
        return new AdminConfig(true, "127.0.0.1", DEFAULT_PORT);
    }

    public static AdminConfig disabled() {
        return new AdminConfig(false, "127.0.0.1", DEFAULT_PORT);
    }

    public AdminConfig withMetrics(boolean on) {
        return new AdminConfig(enabled, address, port, on);
    }
}
