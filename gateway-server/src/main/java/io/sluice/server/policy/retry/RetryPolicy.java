package io.sluice.server.policy.retry;

import io.sluice.core.config.RetryOn;
import io.sluice.core.config.RetryPolicyConfig;

import java.util.Set;

/**
 * A route's retry policy compiled for the request path: which failures are retried, how many
 * times, how long to back off and how long one attempt may take. Protocol-neutral: each protocol
 * maps what happened to a {@link Failure} (and a status). Immutable; shared by every event loop.
 */
public final class RetryPolicy {

    /** What went wrong with one attempt, as a protocol maps it. */
    public enum Failure {
        /** No connection: nothing was sent. */
        CONNECT_FAILURE,
        /** The connection closed, reset or carried garbage before a response (HTTP), or Bolt CONNECTION_CLOSED. */
        RESET,
        /** The per-try timeout expired. */
        TIMEOUT,
        /** A response with a status (HTTP status; Bolt: see {@link RetryPolicy#retriesBoltStatus}). */
        STATUS
    }

    private final RetryPolicyConfig config;
    private final boolean connectFailure;
    private final boolean reset;
    private final boolean refusedStream;
    private final boolean fiveXx;
    private final boolean gatewayError;
    private final boolean timeout;
    private final boolean[] statuses = new boolean[600];
    private final boolean connectionClosed;
    private final boolean errorComm;
    private final boolean threadpoolBusy;
    private final long baseNanos;
    private final long maxNanos;
    private final long perTryNanos;

    private RetryPolicy(RetryPolicyConfig c) {
        this.config = c;
        Set<RetryOn> on = c.retryOn();
        fiveXx = on.contains(RetryOn.FIVE_XX);
        gatewayError = on.contains(RetryOn.GATEWAY_ERROR);
        reset = on.contains(RetryOn.RESET) || fiveXx || gatewayError;
        connectFailure = on.contains(RetryOn.CONNECT_FAILURE) || reset;
        refusedStream = on.contains(RetryOn.REFUSED_STREAM) || reset;
        timeout = on.contains(RetryOn.TIMEOUT) || reset;
        if (on.contains(RetryOn.RETRIABLE_STATUS_CODES)) {
            for (int s : c.retriableStatusCodes()) {
                statuses[s] = true;
            }
        }
        connectionClosed = on.contains(RetryOn.CONNECTION_CLOSED) || on.contains(RetryOn.RESET);
        errorComm = on.contains(RetryOn.ERROR_COMM);
        threadpoolBusy = on.contains(RetryOn.SERVER_THREADPOOL_BUSY);
        baseNanos = c.baseInterval().toNanos();
        maxNanos = c.maxInterval().toNanos();
        perTryNanos = c.perTryTimeout() == null ? 0 : c.perTryTimeout().toNanos();
    }

    /** The compiled policy, or null for none. */
    public static RetryPolicy of(RetryPolicyConfig c) {
        return c == null || c.numRetries() == 0 ? null : new RetryPolicy(c);
    }

    public RetryPolicyConfig config() {
        return config;
    }

    public int numRetries() {
        return config.numRetries();
    }

    public int maxBodyBytes() {
        return config.maxBodyBytes();
    }

    /** The per-try timeout, 0 = none (the route's timeout bounds the single attempt). */
    public long perTryTimeoutNanos() {
        return perTryNanos;
    }

    public boolean includeAttemptCount() {
        return config.includeAttemptCount();
    }

    /**
     * Whether an HTTP attempt that failed this way may be retried. {@code replaySafe}: the request
     * may be sent again once bytes reached the upstream (an idempotent method, or the route allows
     * non-idempotent retries). A connect failure sent nothing and is retried for any method.
     */
    public boolean retriesHttp(Failure f, int status, boolean replaySafe) {
        return switch (f) {
            case CONNECT_FAILURE -> connectFailure;
            case RESET -> reset && replaySafe;
            case TIMEOUT -> timeout && replaySafe;
            case STATUS -> replaySafe && retriesStatus(status);
        };
    }

    /**
     * HTTP/2 upstream: whether a stream the server refused (RST_STREAM REFUSED_STREAM) is retried:
     * {@code refused-stream}, or anything that retries resets. Safe for any method: a refused stream
     * was not processed (RFC 9113 §8.7).
     */
    public boolean retriesRefusedStream() {
        return refusedStream;
    }

    /** Whether a response status is retried (5xx, gateway errors, the listed statuses). */
    public boolean retriesStatus(int status) {
        return (fiveXx && status >= 500 && status <= 599)
                || (gatewayError && status >= 502 && status <= 504)
                || (status >= 0 && status < statuses.length && statuses[status]);
    }

    /** Whether an HTTP method may be replayed after bytes were sent. */
    public boolean replaySafe(String method) {
        return config.retryNonIdempotent() || idempotent(method);
    }

    /**
     * Whether a Bolt attempt that failed this way may be retried: connect failures always when
     * configured, a closed connection, ERROR_COMM or SERVER_THREADPOOL_BUSY when listed, and
     * timeouts only when the route says the service is idempotent.
     */
    public boolean retriesBolt(Failure f) {
        return switch (f) {
            case CONNECT_FAILURE -> connectFailure || connectionClosed;
            case RESET -> connectionClosed;
            case TIMEOUT -> config.idempotent() && (timeout || connectionClosed);
            case STATUS -> false;
        };
    }

    /** Whether a Bolt response status is retried: ERROR_COMM or SERVER_THREADPOOL_BUSY when listed. */
    public boolean retriesBoltStatus(boolean errorCommStatus, boolean threadpoolBusyStatus) {
        return (errorComm && errorCommStatus) || (threadpoolBusy && threadpoolBusyStatus);
    }

    /**
     * The back-off before retry number {@code retry} (1 = the first retry): full jitter, a random
     * time in [0, min(max, (2^retry - 1) × base)) chosen by {@code u} in [0, 1).
     */
    public long backoffNanos(int retry, double u) {
        long cap = retry >= 62 ? maxNanos : Math.min(maxNanos, ((1L << retry) - 1) * baseNanos);
        return (long) (u * cap);
    }

    /** GET, HEAD, OPTIONS, PUT, DELETE, TRACE (RFC 9110 §9.2.2). */
    public static boolean idempotent(String m) {
        return switch (m) {
            case "GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE" -> true;
            default -> false;
        };
    }
}
