package io.sluice.core.config;

/** What an HTTP cluster's hosts speak (cluster {@code upstream_protocol}, docs/http2.md). */
public enum UpstreamProtocol {
    /** HTTP/1.1 keep-alive connections (the default). */
    HTTP1("http1"),
    /** HTTP/2 in clear text with prior knowledge: multiplexed connections, gRPC end to end. */
    H2C("h2c"),
    /** HTTP/2 over TLS (ALPN {@code h2}) with the cluster's {@code tls} block: multiplexed connections. */
    H2("h2");

    private final String jsonName;

    UpstreamProtocol(String jsonName) {
        this.jsonName = jsonName;
    }

    /** Whether the hosts speak HTTP/2 ({@code h2c} or {@code h2}). */
    public boolean http2() {
        return this != HTTP1;
    }

    public String jsonName() {
        return jsonName;
    }

    /** The value of {@code json}, or null when it names none. */
    public static UpstreamProtocol of(String json) {
        for (UpstreamProtocol p : values()) {
            if (p.jsonName.equals(json)) {
                return p;
            }
        }
        return null;
    }
}
