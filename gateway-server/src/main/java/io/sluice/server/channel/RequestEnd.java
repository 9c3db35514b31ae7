package io.sluice.server.channel;

import io.sluice.core.cluster.Host;
import io.sluice.server.metrics.RequestOutcome;
import io.sluice.server.route.Route;

/**
 * The end of one downstream request, whatever its protocol: the one event metrics, the access log
 * (and later outlier detection and the retry budget) observe ({@link RequestLog}). A connection's
 * handler owns one instance and refills it for every request it finishes ({@link #reset} then the
 * fields), so reporting a request allocates nothing; observers read it during the call only and
 * must not keep it. Event loop only.
 */
public final class RequestEnd {

    private final String listener;
    private final String protocol;
    private final boolean httpStatus;

    /** The route it took; null: none matched (or, on Bolt, the listener's default cluster). */
    public Route route;
    public RequestOutcome outcome;
    /** The status sent: an HTTP status, or a Bolt response status; 0 when none. */
    public int status;
    /** From request start (head read) to its end, on the listener's clock. */
    public long durationNanos;
    /** The upstream host it went to, or null. */
    public Host host;
    /** The client's address as text (filled only while the access log is on). */
    public String client;
    /** The verified TLS client identity (access log; set with {@link #client}), or null. */
    public String clientCert;
    /** "METHOD target" for HTTP, "service#method" for Bolt (filled only while the access log is on), or null. */
    public String target;
    /** Response body bytes sent to the client (HTTP). */
    public long bytesOut;
    /** The trace id (HTTP: traceparent's, else x-request-id; Bolt: sofaTraceId), filled while the access log is on; or null. */
    public String traceId;
    /** Upstream attempts made (1 + retries; 1 also when none was made). */
    public int attempts = 1;

    /**
     * @param httpStatus whether {@link #status} is an HTTP status (its class tags the request
     *                   meters); Bolt statuses are logged but not metered
     */
    public RequestEnd(String listener, String protocol, boolean httpStatus) {
        this.listener = listener;
        this.protocol = protocol;
        this.httpStatus = httpStatus;
    }

    public String listener() {
        return listener;
    }

    /** {@code "http"} or {@code "bolt"}. */
    public String protocol() {
        return protocol;
    }

    /** The HTTP status sent, for the meters' status class; 0 when none or not HTTP. */
    public int httpStatus() {
        return httpStatus ? status : 0;
    }

    /** The upstream's address, or null. */
    public String upstream() {
        Host h = host;
        return h == null ? null : h.address();
    }

    /** Clears the per-request fields (the client address is per connection and stays). */
    public RequestEnd reset() {
        route = null;
        outcome = null;
        status = 0;
        durationNanos = 0;
        host = null;
        target = null;
        bytesOut = 0;
        traceId = null;
        attempts = 1;
        return this;
    }
}
