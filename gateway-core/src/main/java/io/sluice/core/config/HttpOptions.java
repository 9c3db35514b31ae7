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
        return new HttpOptions(8192, 16384, 0, Duration.ofSeconds(60), Duration.ofSeconds(10), true, true);
    }
}
