package io.sluice.core.config;

import java.time.Duration;
import java.util.List;

/**
 * Downstream HTTP/1.1 limits and timeouts of a listener.
 *
 * @param maxInitialLineLength  longest request line accepted (longer: 414); also the longest status line
 *                              accepted from an upstream (longer: 502)
 * @param maxHeaderSize         total size of request headers, and of a request's trailer section (larger: 431)
 * @param maxRequestBodyBytes   largest request body (larger: 413); 0 = unlimited
 * @param idleTimeout           a keep-alive connection with no request in progress is closed after this
 * @param requestHeaderTimeout  the whole request head must arrive within this (slowloris defence: 408)
 * @param preserveHost          forward the client's Host header (true) or use the upstream address
 * @param xForwarded            set X-Forwarded-For/-Proto/-Host (false: pass the client's headers as they are)
 * @param requestBodyTimeout    while a request body is incomplete, the longest time without a byte
 *                              from the client (while the gateway reads it) → 408, or a close if the
 *                              response has started; the upstream connection is closed
 * @param writeTimeout          the longest time the client connection may stay unwritable (a client
 *                              that stops reading its response) before both sides are closed
 * @param drainGrace            when the gateway drains, how long an idle keep-alive connection stays
 *                              open so a request already on its way is still answered (with
 *                              {@code Connection: close}); 0 = close idle connections at once
 * @param trustedProxies        peers whose X-Forwarded-* and Forwarded headers are believed (kept and
 *                              appended to); from anyone else they are replaced. Empty: nobody.
 * @param path                  path normalization rules
 * @param maxResponseHeaderSize total size of response headers from an upstream (larger: 502)
 * @param minRequestBodyRate    bytes per second a request body must average while the gateway reads
 *                              it, once {@code requestBodyTimeout} has passed since the head (every
 *                              {@code minRequestBodyRate} bytes received buy one more second) → 408,
 *                              or a close if the response has started; 0 = no rate rule
 * @param http2                 HTTP/2 (h2c) on this listener and its limits ({@link Http2Options})
 * @param tracing               request ids and trace context; null: none (the request path does no work for it)
 */
public record HttpOptions(int maxInitialLineLength, int maxHeaderSize, long maxRequestBodyBytes,
                          Duration idleTimeout, Duration requestHeaderTimeout, boolean preserveHost,
                          boolean xForwarded, Duration requestBodyTimeout, Duration writeTimeout,
                          Duration drainGrace, List<CidrRange> trustedProxies, PathOptions path,
                          int maxResponseHeaderSize, long minRequestBodyRate, Http2Options http2,
                          RequestTracing tracing) {

    public static final Duration DEFAULT_REQUEST_BODY_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_WRITE_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_DRAIN_GRACE = Duration.ofMillis(500);
    public static final int DEFAULT_MAX_RESPONSE_HEADER_SIZE = 65536;
    /** Default {@code min_request_body_rate}: bytes per second (the rate Apache httpd's mod_reqtimeout defaults to). */
    public static final long DEFAULT_MIN_REQUEST_BODY_RATE = 500;

    public HttpOptions {
        Checks.range("max_initial_line_length", maxInitialLineLength, 256, 1 << 20);
        Checks.range("max_header_size", maxHeaderSize, 1024, 1 << 20);
        Checks.atLeast("max_request_body", maxRequestBodyBytes, 0);
        Checks.positive("idle_timeout", idleTimeout);
        Checks.positive("request_header_timeout", requestHeaderTimeout);
        requestBodyTimeout = requestBodyTimeout == null ? DEFAULT_REQUEST_BODY_TIMEOUT
                : Checks.positive("request_body_timeout", requestBodyTimeout);
        writeTimeout = writeTimeout == null ? DEFAULT_WRITE_TIMEOUT : Checks.positive("write_timeout", writeTimeout);
        drainGrace = drainGrace == null ? DEFAULT_DRAIN_GRACE : Checks.nonNegative("drain_grace", drainGrace);
        trustedProxies = trustedProxies == null ? List.of() : List.copyOf(trustedProxies);
        path = path == null ? PathOptions.defaults() : path;
        Checks.range("max_response_header_size", maxResponseHeaderSize, 1024, 1 << 20);
        Checks.atLeast("min_request_body_rate", minRequestBodyRate, 0);
        http2 = http2 == null ? Http2Options.defaults() : http2;
        tracing = tracing == null || !tracing.any() ? null : tracing;
    }

    /** The options as they were before HTTP/2 and tracing existed (HTTP/2 options at their defaults, no tracing). */
    public HttpOptions(int maxInitialLineLength, int maxHeaderSize, long maxRequestBodyBytes,
                       Duration idleTimeout, Duration requestHeaderTimeout, boolean preserveHost,
                       boolean xForwarded, Duration requestBodyTimeout, Duration writeTimeout,
                       Duration drainGrace, List<CidrRange> trustedProxies, PathOptions path,
                       int maxResponseHeaderSize, long minRequestBodyRate) {
        this(maxInitialLineLength, maxHeaderSize, maxRequestBodyBytes, idleTimeout, requestHeaderTimeout, preserveHost,
                xForwarded, requestBodyTimeout, writeTimeout, drainGrace, trustedProxies, path, maxResponseHeaderSize,
                minRequestBodyRate, null, null);
    }

    public static HttpOptions defaults() {
        return builder().build();
    }

    public HttpOptions withTrustedProxies(List<CidrRange> proxies) {
        return toBuilder().trustedProxies(proxies).build();
    }

    public HttpOptions withPath(PathOptions p) {
        return toBuilder().path(p).build();
    }

    public HttpOptions withForwarding(boolean preserve, boolean forwarded) {
        return toBuilder().preserveHost(preserve).xForwarded(forwarded).build();
    }

    /** Whether {@code peer} (4 or 16 address bytes) is one of the {@link #trustedProxies}. */
    public boolean trusts(byte[] peer) {
        for (CidrRange r : trustedProxies) {
            if (r.contains(peer)) {
                return true;
            }
        }
        return false;
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
        b.requestBodyTimeout = requestBodyTimeout;
        b.writeTimeout = writeTimeout;
        b.drainGrace = drainGrace;
        b.trustedProxies = trustedProxies;
        b.path = path;
        b.maxResponseHeaderSize = maxResponseHeaderSize;
        b.minRequestBodyRate = minRequestBodyRate;
        b.http2 = http2;
        b.tracing = tracing;
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
        private Duration requestBodyTimeout = DEFAULT_REQUEST_BODY_TIMEOUT;
        private Duration writeTimeout = DEFAULT_WRITE_TIMEOUT;
        private Duration drainGrace = DEFAULT_DRAIN_GRACE;
        private List<CidrRange> trustedProxies = List.of();
        private PathOptions path = PathOptions.defaults();
        private int maxResponseHeaderSize = DEFAULT_MAX_RESPONSE_HEADER_SIZE;
        private long minRequestBodyRate = DEFAULT_MIN_REQUEST_BODY_RATE;
        private Http2Options http2 = Http2Options.defaults();
        private RequestTracing tracing;

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

        public Builder requestBodyTimeout(Duration requestBodyTimeout) {
            this.requestBodyTimeout = requestBodyTimeout;
            return this;
        }

        public Builder writeTimeout(Duration writeTimeout) {
            this.writeTimeout = writeTimeout;
            return this;
        }

        public Builder drainGrace(Duration drainGrace) {
            this.drainGrace = drainGrace;
            return this;
        }

        public Builder trustedProxies(List<CidrRange> trustedProxies) {
            this.trustedProxies = trustedProxies;
            return this;
        }

        public Builder path(PathOptions path) {
            this.path = path;
            return this;
        }

        public Builder maxResponseHeaderSize(int maxResponseHeaderSize) {
            this.maxResponseHeaderSize = maxResponseHeaderSize;
            return this;
        }

        public Builder minRequestBodyRate(long minRequestBodyRate) {
            this.minRequestBodyRate = minRequestBodyRate;
            return this;
        }

        public Builder http2(Http2Options http2) {
            this.http2 = http2;
            return this;
        }

        public Builder tracing(RequestTracing tracing) {
            this.tracing = tracing;
            return this;
        }

        public HttpOptions build() {
            return new HttpOptions(maxInitialLineLength, maxHeaderSize, maxRequestBodyBytes, idleTimeout,
                    requestHeaderTimeout, preserveHost, xForwarded, requestBodyTimeout, writeTimeout, drainGrace,
                    trustedProxies, path, maxResponseHeaderSize, minRequestBodyRate, http2, tracing);
        }
    }
}
