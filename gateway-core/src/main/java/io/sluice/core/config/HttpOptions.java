package io.sluice.core.config;

import java.time.Duration;

/**
 * Downstream HTTP/1.1 limits and timeouts of a listener.
 *
 * @param maxInitialLineLength  longest request line accepted (longer: 414... answered as 400)
 * @param maxHeaderSize         total size of request headers (larger: 431)
 * @param maxRequestBodyBytes   largest request body (larger: 413); 0 = unlimited
 * @param idleTimeout           a keep-alive connection with no request in progress is closed after this
 * @param requestHeaderTimeout  the whole request head must arrive within this (slowloris defence: 408)
 * @param preserveHost          forward the client's Host header (true) or use the upstream address
 * @param xForwarded            add X-Forwarded-For/-Proto/-Host
 */
public record HttpOptions(int maxInitialLineLength, int maxHeaderSize, long maxRequestBodyBytes,
                          Duration idleTimeout, Duration requestHeaderTimeout, boolean preserveHost,
                          boolean xForwarded) {

    public HttpOptions {
        Checks.range("max_initial_line_length", maxInitialLineLength, 256, 1 << 20);
        Checks.range("max_header_size", maxHeaderSize, 1024, 1 << 20);
        Checks.atLeast("max_request_body", maxRequestBodyBytes, 0);
        Checks.positive("idle_timeout", idleTimeout);
        Checks.positive("request_header_timeout", requestHeaderTimeout);
    }

    public static HttpOptions defaults() {
        return builder().build();
    }

    /** A builder with the defaults a config file gets for keys it leaves out. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this config's values. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.maxInitialLineLength = maxInitialLineLength;
        b.maxHeaderSize = maxHeaderSize;
        b.maxRequestBodyBytes = maxRequestBodyBytes;
        b.idleTimeout = idleTimeout;
        b.requestHeaderTimeout = requestHeaderTimeout;
        b.preserveHost = preserveHost;
        b.xForwarded = xForwarded;
        return b;
    }

    /**
     * Builds a {@link HttpOptions} (defaults: those of {@link #defaults()}). Validation happens in the
     * record's constructor, when {@link #build()} is called.
     */
    public static final class Builder {
        private int maxInitialLineLength = 8192;
        private int maxHeaderSize = 16384;
        private long maxRequestBodyBytes = 0;
        private Duration idleTimeout = Duration.ofSeconds(60);
        private Duration requestHeaderTimeout = Duration.ofSeconds(10);
        private boolean preserveHost = true;
        private boolean xForwarded = true;

        private Builder() {
        }

        public Builder maxInitialLineLength(int maxInitialLineLength) {
            this.maxInitialLineLength = maxInitialLineLength;
            return this;
        }

        public Builder maxHeaderSize(int maxHeaderSize) {
            this.maxHeaderSize = maxHeaderSize;
            return this;
        }

        public Builder maxRequestBodyBytes(long maxRequestBodyBytes) {
            this.maxRequestBodyBytes = maxRequestBodyBytes;
            return this;
        }

        public Builder idleTimeout(Duration idleTimeout) {
            this.idleTimeout = idleTimeout;
            return this;
        }

        public Builder requestHeaderTimeout(Duration requestHeaderTimeout) {
            this.requestHeaderTimeout = requestHeaderTimeout;
            return this;
        }

        public Builder preserveHost(boolean preserveHost) {
            this.preserveHost = preserveHost;
            return this;
        }

        public Builder xForwarded(boolean xForwarded) {
            this.xForwarded = xForwarded;
            return this;
        }

        public HttpOptions build() {
            return new HttpOptions(maxInitialLineLength, maxHeaderSize, maxRequestBodyBytes, idleTimeout, requestHeaderTimeout, preserveHost, xForwarded);
        }
    }
}
