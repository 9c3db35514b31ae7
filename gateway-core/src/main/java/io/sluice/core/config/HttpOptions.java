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
 * @param requestBodyTimeout    while a request body is incomplete, the longest time without a byte
 *                              from the client (while the gateway reads it) → 408, or a close if the
 *                              response has started; the upstream connection is closed
 * @param writeTimeout          the longest time the client connection may stay unwritable (a client
 *                              that stops reading its response) before both sides are closed
 * @param drainGrace            when the gateway drains, how long an idle keep-alive connection stays
 *                              open so a request already on its way is still answered (with
 *                              {@code Connection: close}); 0 = close idle connections at once
 */
public record HttpOptions(int maxInitialLineLength, int maxHeaderSize, long maxRequestBodyBytes,
                          Duration idleTimeout, Duration requestHeaderTimeout, boolean preserveHost,
                          boolean xForwarded, Duration requestBodyTimeout, Duration writeTimeout,
                          Duration drainGrace) {

    public static final Duration DEFAULT_REQUEST_BODY_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_WRITE_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_DRAIN_GRACE = Duration.ofMillis(500);

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
    }

    /** Options with the default body and write timeouts and drain grace. */
    public HttpOptions(int maxInitialLineLength, int maxHeaderSize, long maxRequestBodyBytes, Duration idleTimeout,
                       Duration requestHeaderTimeout, boolean preserveHost, boolean xForwarded) {
        this(maxInitialLineLength, maxHeaderSize, maxRequestBodyBytes, idleTimeout, requestHeaderTimeout, preserveHost,
                xForwarded, null, null, null);
    }

    /** Options with the default drain grace. */
    public HttpOptions(int maxInitialLineLength, int maxHeaderSize, long maxRequestBodyBytes, Duration idleTimeout,
                       Duration requestHeaderTimeout, boolean preserveHost, boolean xForwarded,
                       Duration requestBodyTimeout, Duration writeTimeout) {
        this(maxInitialLineLength, maxHeaderSize, maxRequestBodyBytes, idleTimeout, requestHeaderTimeout, preserveHost,
                xForwarded, requestBodyTimeout, writeTimeout, null);
    }

    public static HttpOptions defaults() {
        return new HttpOptions(8192, 16384, 0, Duration.ofSeconds(60), Duration.ofSeconds(10), true, true,
                DEFAULT_REQUEST_BODY_TIMEOUT, DEFAULT_WRITE_TIMEOUT, DEFAULT_DRAIN_GRACE);
    }
}
