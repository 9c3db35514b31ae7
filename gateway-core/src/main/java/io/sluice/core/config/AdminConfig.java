package io.sluice.core.config;

/** The admin listener (metrics, cluster state, reload). Default 127.0.0.1:34901. */
public record AdminConfig(boolean enabled, String address, int port) {

    public static final int DEFAULT_PORT = 34901;

    public AdminConfig {
        address = address == null ? "127.0.0.1" : address;
        Checks.range("port", port, 0, 65535);
    }

    public static AdminConfig defaults() {
        return new AdminConfig(true, "127.0.0.1", DEFAULT_PORT);
    }

    public static AdminConfig disabled() {
        return new AdminConfig(false, "127.0.0.1", DEFAULT_PORT);
    }
}
