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
 * @param trustedProxies        peers whose X-Forwarded-* and Forwarded headers are believed (kept and
 *                              appended to); from anyone else they are replaced. Empty: nobody.
 * @param path                  path normalization rules
 * @param maxResponseHeaderSize total size of response headers from an upstream (larger: 502)
 */
public record HttpOptions(int maxInitialLineLength, int maxHeaderSize, long maxRequestBodyBytes,
                          Duration idleTimeout, Duration requestHeaderTimeout, boolean preserveHost,
                          boolean xForwarded, List<CidrRange> trustedProxies, PathOptions path,
                          int maxResponseHeaderSize) {

    public static final int DEFAULT_MAX_RESPONSE_HEADER_SIZE = 65536;

    public HttpOptions {
        Checks.range("max_initial_line_length", maxInitialLineLength, 256, 1 << 20);
        Checks.range("max_header_size", maxHeaderSize, 1024, 1 << 20);
        Checks.atLeast("max_request_body", maxRequestBodyBytes, 0);
        Checks.positive("idle_timeout", idleTimeout);
        Checks.positive("request_header_timeout", requestHeaderTimeout);
        trustedProxies = trustedProxies == null ? List.of() : List.copyOf(trustedProxies);
        path = path == null ? PathOptions.defaults() : path;
        Checks.range("max_response_header_size", maxResponseHeaderSize, 1024, 1 << 20);
    }

    /** The options before trusted proxies, path rules and the response header limit existed (those take their defaults). */
    public HttpOptions(int maxInitialLineLength, int maxHeaderSize, long maxRequestBodyBytes, Duration idleTimeout,
                       Duration requestHeaderTimeout, boolean preserveHost, boolean xForwarded) {
        this(maxInitialLineLength, maxHeaderSize, maxRequestBodyBytes, idleTimeout, requestHeaderTimeout, preserveHost,
                xForwarded, List.of(), PathOptions.defaults(), DEFAULT_MAX_RESPONSE_HEADER_SIZE);
    }

    public static HttpOptions defaults() {
        return new HttpOptions(8192, 16384, 0, Duration.ofSeconds(60), Duration.ofSeconds(10), true, true);
    }

    public HttpOptions withTrustedProxies(List<CidrRange> proxies) {
        return new HttpOptions(maxInitialLineLength, maxHeaderSize, maxRequestBodyBytes, idleTimeout,
                requestHeaderTimeout, preserveHost, xForwarded, proxies, path, maxResponseHeaderSize);
    }

    public HttpOptions withPath(PathOptions p) {
        return new HttpOptions(maxInitialLineLength, maxHeaderSize, maxRequestBodyBytes, idleTimeout,
                requestHeaderTimeout, preserveHost, xForwarded, trustedProxies, p, maxResponseHeaderSize);
    }

    public HttpOptions withForwarding(boolean preserve, boolean forwarded) {
        return new HttpOptions(maxInitialLineLength, maxHeaderSize, maxRequestBodyBytes, idleTimeout,
                requestHeaderTimeout, preserve, forwarded, trustedProxies, path, maxResponseHeaderSize);
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
}
