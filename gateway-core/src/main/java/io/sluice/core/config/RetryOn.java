package io.sluice.core.config;

/**
 * A condition under which a request is tried again ({@link RetryPolicyConfig#retryOn()}). Names in
 * config files are Envoy's {@code retry_on} tokens where Envoy has one.
 */
public enum RetryOn {
    /** The TCP connection to the host failed or timed out: nothing was sent (safe for any method). */
    CONNECT_FAILURE("connect-failure"),
    /** The upstream closed or reset the connection, or sent garbage, before a response head. */
    RESET("reset"),
    /** HTTP/2: the stream was refused (safe for any method); kept for the HTTP/2 upstream. */
    REFUSED_STREAM("refused-stream"),
    /** Any 5xx response, and every failure above (Envoy's {@code 5xx}). */
    FIVE_XX("5xx"),
    /** 502, 503 or 504 only, and connect failures / resets (Envoy's {@code gateway-error}). */
    GATEWAY_ERROR("gateway-error"),
    /** The statuses listed in {@link RetryPolicyConfig#retriableStatusCodes()}. */
    RETRIABLE_STATUS_CODES("retriable-status-codes"),
    /** Bolt: the upstream connection closed before the response (RpcClient's CONNECTION_CLOSED). */
    CONNECTION_CLOSED("connection-closed"),
    /** Bolt: a communication error (ERROR_COMM) response. */
    ERROR_COMM("error-comm"),
    /** Bolt: the server said SERVER_THREADPOOL_BUSY. */
    SERVER_THREADPOOL_BUSY("server-threadpool-busy"),
    /** The per-try timeout expired; honoured only when the route is marked idempotent. */
    TIMEOUT("timeout");

    private final String token;

    RetryOn(String token) {
        this.token = token;
    }

    /** The config-file spelling. */
    public String token() {
        return token;
    }

    /** Parses a config-file token; null when unknown. */
    public static RetryOn parse(String token) {
        for (RetryOn r : values()) {
            if (r.token.equals(token)) {
                return r;
            }
        }
        return null;
    }
}
