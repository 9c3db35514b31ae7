package io.sluice.server.http;

import io.netty.buffer.ByteBuf;
import io.sluice.codec.http.HttpHead;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.HttpOptions;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.route.Route;

/**
 * The state of the exchange a downstream HTTP connection is carrying: what was asked, where it
 * went, how far the request and the response got, and its deadlines. {@link HttpProxyHandler}
 * owns one instance per connection and reuses it for every request on it (no allocation per
 * request); the fields are set as the exchange goes and reset at its start. Event loop only.
 */
final class HttpExchange {

    /** Counts exchanges on the connection: a callback that carries an older id is stale. */
    int exchangeId;
    /** The request head, held (for the access log) until the exchange ends. */
    HttpHead request;
    String method;
    /** The head as sent upstream, kept only while a retry on a fresh connection is possible. */
    ByteBuf retryHead;
    /** The options in force when the exchange began (a reload applies to the next one). */
    HttpOptions options;
    boolean keepAlive;
    boolean http10;
    boolean requestHasBody;
    boolean requestComplete;
    long requestBodyBytes;
    /**
     * The minimum body rate's clock: when the request head was read, moved later by every span in
     * which the gateway held reads (a slow upstream is not the client's fault). 0 = no rate rule.
     */
    long bodyRateStart;
    /** When the gateway stopped reading the client during this exchange's body (0 = it reads). */
    long readsHeldSince;
    Route route;
    ClusterBalancer cluster;
    Host host;
    /** The request's shadow copies still being fed its body (null: no mirrors). */
    Mirror mirror;
    /** The upstream connection came from the pool (a stale one may be retried once on a fresh one). */
    boolean reusedConnection;
    boolean retried;
    boolean responseStarted;
    /** The response body is close-delimited and chunked by us for the client. */
    boolean chunkResponse;
    boolean upstreamKeepAlive;
    /** The response status sent (0: none yet). */
    int status;
    /** When the exchange began, on the listener's clock. */
    long start;
    /** Response body bytes sent to the client. */
    long bytesOut;
    /** Deadlines on the listener's clock (0: not set). */
    long connectDeadline;
    long responseDeadline;
    /** The Upgrade token sent upstream (the route allows it), or null: a plain request. */
    String upgrade;
    // ---- resilience (policy package)
    /** With a retry policy: the route timeout's deadline over all attempts (0: not set). */
    long overallDeadline;
    /** Holds a slot of the cluster's max_requests / max_pending_requests breaker. */
    boolean requestSlot;
    boolean pendingSlot;
    /** Whether the request named an authority (absolute-form target or Host); set with the head. */
    boolean hasAuthority;
    /** The breakers and retry counters of {@link #cluster} (one side of a weighted split, or the route's). */
    io.sluice.server.policy.ClusterPolicies policies;
}
