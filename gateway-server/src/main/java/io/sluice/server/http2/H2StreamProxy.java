package io.sluice.server.http2;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import io.sluice.codec.http.HttpBody;
import io.sluice.codec.http.HttpDecodeError;
import io.sluice.codec.http.HttpHead;
import io.sluice.codec.http.PathNormalizer;
import io.sluice.codec.http.ProxyHeads;
import io.sluice.core.cluster.Host;
import io.sluice.core.cluster.Outcome;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.time.Ticker;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.channel.ConnectionTimer;
import io.sluice.server.channel.RequestEnd;
import io.sluice.server.http.HttpListenerContext;
import io.sluice.server.http.HttpUpstreamPool;
import io.sluice.server.http.UpstreamHandler;
import io.sluice.server.http.UpstreamListener;
import io.sluice.server.metrics.ClusterMetrics;
import io.sluice.server.metrics.RequestOutcome;
import io.sluice.core.config.RouteRules;
import io.sluice.server.http.LocalAnswers;
import io.sluice.server.route.Route;
import io.sluice.server.route.RouteTable;
import io.sluice.server.route.RouteTraffic;
import io.sluice.server.http.rules.HeaderRuleSet;
import io.sluice.server.http.rules.TrafficHeaders;
import io.sluice.server.policy.ClusterPolicies;
import io.sluice.server.policy.breaker.CircuitBreaker;
import io.sluice.server.policy.ratelimit.RouteLimits;
import io.sluice.server.policy.retry.AttemptHeader;
import io.sluice.server.policy.retry.RetryPolicy;
import io.sluice.server.policy.retry.RetryState;
import io.sluice.core.config.RequestTracing;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * One downstream HTTP/2 stream, the handler of its child channel ({@code Http2MultiplexHandler}):
 * an exchange exactly like an HTTP/1.1 request — routed on {@code :authority}, the normalized
 * {@code :path}, the method and headers; a host picked by the cluster's balancer; sent over a
 * keep-alive connection of the listener's HTTP/1.1 upstream pool of the same event loop (child
 * channels share their parent's loop). The request head is translated (RFC 9113 §8:
 * {@link H2Translation}); a body of unknown length goes chunked; the response head becomes a
 * HEADERS frame and its (de-chunked) body DATA frames.
 *
 * <p>Flow control is backpressure: the child channel reads (and so returns window to the client)
 * only while the upstream connection is writable, and the upstream connection reads only while the
 * stream is writable (its send window open and the connection writable). A client that stops
 * reading stalls its own stream; after {@code write_timeout} the stream is reset and the upstream
 * connection closed, so the gateway never buffers without bound.
 *
 * <p>Errors the gateway makes are HTTP statuses with a text body, or for a gRPC request
 * (content-type {@code application/grpc…}) Trailers-Only responses with {@code grpc-status}
 * ({@link Grpc#statusOf}); {@code grpc-timeout} is the call's deadline, capped by the route timeout.
 */
final class H2StreamProxy extends ChannelInboundHandlerAdapter implements UpstreamListener {

    private enum State { AWAIT_HEADERS, CONNECTING, PROXYING, DONE }

    private static final byte[] CRLF = {'\r', '\n'};
    private static final byte[] LAST_CHUNK = "0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final AsciiString GRPC_CONTENT_TYPE = AsciiString.cached("application/grpc");

    private final H2Connection conn;
    private final HttpListenerContext lc;
    private ChannelHandlerContext ctx;
    private Ticker ticker;
    private ConnectionTimer timer;
    private State state = State.AWAIT_HEADERS;
    private final ArrayDeque<Object> queue = new ArrayDeque<>(2);
    private final RequestEnd end;

    private HttpOptions options;
    private String method;
    private String target;
    private Route route;
    private ClusterBalancer cluster;
    private Host host;
    private ByteBuf head;
    private Channel upstream;
    private UpstreamHandler upstreamHandler;
    private boolean grpc;
    private boolean chunked;
    private boolean requestComplete;
    private boolean responseStarted;
    private boolean upstreamKeepAlive;
    private boolean finished;
    private boolean started;
    private int status;
    private long start;
    private long bodyBytes;
    private long bytesOut;
    private long connectDeadline;
    private long responseDeadline;
    private long callDeadline;
    private boolean unwritable;
    private long unwritableSince;
    /** While the request body is incomplete: when its last DATA arrived (or reads resumed); 0 = not waiting. */
    private long lastBodyAt;
    /** http2: the stream goes to an h2c upstream frame by frame ({@link H2Forward}); null = HTTP/1.1 upstream. */
    private H2Forward h2Upstream;

    // ---- policies (docs/http2.md "what works per stream"): null/false unless the route or cluster configures them
    /** The breakers and retry counters of the chosen cluster. */
    private ClusterPolicies policies;
    /** Holds a max_requests slot / a max_pending_requests slot of {@link #policies}. */
    private boolean requestSlot;
    private boolean pendingSlot;
    /** Retry state: only with a retry policy or a per-host limit (else null: one plain pick). */
    private RetryState retry;
    /** Request ids, trace context, header rules: only with tracing or header rules (else null). */
    private TrafficHeaders trafficHeaders;
    /** The request as received (for the head of a retry attempt) and what the head is built from. */
    private Http2Headers received;
    private String authority;
    private String forward;
    /** The current upstream attempt; callbacks of an earlier one are stale. */
    private int attemptId;
    /** With a retry policy: the route timeout bounding all attempts (0: not armed yet). */
    private long overallDeadline;
    /** The route's mirrors of this request (HTTP/1.1 upstreams; docs/traffic.md), or null. */
    private io.sluice.server.http.Mirror mirror;

    H2StreamProxy(H2Connection conn) {
        this.conn = conn;
        this.lc = conn.lc;
        this.end = new RequestEnd(lc.name(), "h2c", true);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.ticker = conn.scheduler.ticker();
        this.timer = new ConnectionTimer(conn.scheduler, this::onTimer);
    }

    // ---------------------------------------------------------------- downstream

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (h2Upstream != null) { // http2: h2c upstream
            h2Upstream.fromClient(msg);
            return;
        }
        if (msg instanceof Http2HeadersFrame f) {
            if (state == State.AWAIT_HEADERS) {
                onRequestHeaders(f.headers(), f.isEndStream());
            } else {
                onRequestTrailers(f);
            }
        } else if (msg instanceof Http2DataFrame d) {
            onRequestData(d);
        } else if (msg instanceof Http2ResetFrame) {
            onClientReset();
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (h2Upstream != null) {
            h2Upstream.clientReadComplete();
        }
        if (upstream != null) {
            upstream.flush();
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        boolean writable = ctx.channel().isWritable();
        if (h2Upstream != null) {
            h2Upstream.clientWritable(writable);
        }
        if (upstream != null) {
            upstream.config().setAutoRead(writable);
        }
        if (!writable) {
            if (!unwritable && state != State.DONE) {
                unwritable = true;
                unwritableSince = ticker.nanoTime();
                timer.arm(unwritableSince + options().writeTimeout().toNanos());
            }
        } else {
            unwritable = false;
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        timer.cancel();
        if (h2Upstream != null) {
            h2Upstream.clientGone();
        }
        releaseQueue();
        if (state != State.DONE && started) {
            state = State.DONE;
            if (upstream != null) {
                detachUpstream().close();
            }
            finish(RequestOutcome.CLIENT_CLOSED, responseStarted ? status : 0);
        }
        state = State.DONE;
        releaseHead();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // a stream error (e.g. headers too large for MAX_HEADER_LIST_SIZE after they were counted): reset
        ctx.close();
    }

    private HttpOptions options() {
        return options != null ? options : lc.options();
    }

    // ---------------------------------------------------------------- request

    private void onRequestHeaders(Http2Headers h, boolean endStream) {
        started = true;
        conn.streamStarted();
        start = ticker.nanoTime();
        lc.metrics().requestStarted();
        options = lc.options();
        requestComplete = endStream;
        if (!endStream) { // request_body_timeout: no DATA for that long while the gateway reads → 408
            lastBodyAt = start;
            timer.arm(start + options.requestBodyTimeout().toNanos());
        }
        grpc = Grpc.isGrpc(h.get("content-type"));
        CharSequence m = h.method();
        CharSequence p = h.path();
        method = m == null ? "-" : m.toString();
        target = p == null ? "-" : p.toString();
        if (m == null || p == null || h.scheme() == null) {
            respondError(400, "missing :method, :scheme or :path", RequestOutcome.BAD_REQUEST);
            return;
        }
        if ("CONNECT".equals(method)) {
            respondError(400, "CONNECT is not supported", RequestOutcome.BAD_REQUEST);
            return;
        }
        CharSequence authorityCs = h.authority();
        CharSequence hostField = h.get("host");
        if (authorityCs != null && hostField != null && !AsciiString.contentEquals(authorityCs, hostField)) {
            respondError(400, "conflicting :authority and host", RequestOutcome.BAD_REQUEST);
            return;
        }
        String authority = authorityCs != null ? authorityCs.toString() : hostField != null ? hostField.toString() : null;
        if (authority == null || authority.isEmpty() || H2Translation.badValue(authority) || authority.indexOf(' ') >= 0) {
            respondError(400, "missing or malformed :authority", RequestOutcome.BAD_REQUEST);
            return;
        }
        String problem = H2Translation.check(h);
        if (problem != null) {
            respondError(400, problem, RequestOutcome.BAD_REQUEST);
            return;
        }
        // the normalized path, routed on and forwarded (as for HTTP/1.1)
        String path;
        String query;
        int q = target.indexOf('?');
        String rawPath = q < 0 ? target : target.substring(0, q);
        query = q < 0 ? "" : target.substring(q);
        if ("*".equals(target) && "OPTIONS".equals(method)) {
            path = "*";
        } else if (rawPath.isEmpty() || rawPath.charAt(0) != '/' || H2Translation.badValue(target) || target.indexOf(' ') >= 0) {
            respondError(400, "malformed :path", RequestOutcome.BAD_REQUEST);
            return;
        } else {
            try {
                path = PathNormalizer.normalize(rawPath, escapedSlashes(options), options.path().mergeSlashes());
            } catch (IllegalArgumentException e) {
                respondError(400, "malformed request: " + e.getMessage(), RequestOutcome.BAD_REQUEST);
                return;
            }
        }
        RouteTable table = lc.routes();
        io.sluice.server.tls.TlsRequests tls = conn.tls();
        java.util.function.Function<String, String> fields = name -> {
            CharSequence v = h.get(AsciiString.of(name).toLowerCase());
            return v == null ? null : v.toString();
        };
        route = table.routeHttp(table.usesHost() ? ProxyHeads.hostWithoutPort(authority) : null,
                table.usesPath() ? path : null, method, tls == null ? fields : tls.headers(fields));
        if (route == null) {
            respondError(404, "no route for " + method + " " + path + " on host " + authority, RequestOutcome.NO_ROUTE);
            return;
        }
        RouteLimits limits = route.rateLimits(); // rate limits (docs/rate-limits.md): 429, gRPC UNAVAILABLE
        if (limits != null) {
            long wait = limits.decideHttp(fields, ctx.channel().parent() != null
                    ? ctx.channel().parent().remoteAddress() : ctx.channel().remoteAddress());
            if (wait != RouteLimits.ALLOWED) {
                respondError(429, "rate limited on route " + route.name(), RequestOutcome.RATE_LIMITED,
                        Long.toString(RouteLimits.retryAfterSeconds(wait)));
                return;
            }
        }
        if (route.cluster() == null) { // route rules: a redirect or direct response, no cluster
            respondLocal(authority, target);
            return;
        }
        long max = options.maxRequestBodyBytes();
        long contentLength = contentLength(h);
        if (contentLength == -2) {
            respondError(400, "malformed content-length", RequestOutcome.BAD_REQUEST);
            return;
        }
        if (max > 0 && contentLength > max) {
            respondError(413, "request body of " + contentLength + " bytes exceeds the limit of " + max,
                    RequestOutcome.BODY_TOO_LARGE);
            return;
        }
        if (!admit(h, fields)) {
            return; // answered: breaker overflow or no healthy host
        }
        CharSequence expect = h.get("expect");
        if (expect != null && !endStream && AsciiString.contentEqualsIgnoreCase("100-continue", expect)) {
            // like the HTTP/1.1 path (and nginx): the gateway itself invites the body once it knows where it goes
            ctx.writeAndFlush(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().status("100"), false), ctx.voidPromise());
        }
        String fwd = path.equals(rawPath) ? target : path + query;
        if (route.rewrites()) {
            fwd = route.rewrite(fwd);
        }
        this.forward = fwd;
        this.authority = authority;
        this.received = h;
        if (cluster.config().upstreamProtocol().http2()) { // http2: h2c / h2 upstream
            host.requestStarted();
            state = State.PROXYING;
            requestComplete = endStream;
            h2Upstream = new H2Forward(this, ctx);
            if (retry != null && retry.policy() != null) {
                h2Upstream.replayLimit(retry.policy().maxBodyBytes());
            }
            if (grpc) { // the gateway's deadline too: grpc-timeout capped by the route timeout
                long t = Grpc.timeoutNanos(h.get("grpc-timeout"));
                if (t >= 0) {
                    callDeadline = start + Math.min(t, route.timeoutNanos());
                    timer.arm(callDeadline);
                }
            }
            h2Upstream.start(conn.pool, host, cluster.config(), upstreamHeaders(host), endStream);
            return;
        }
        chunked = !endStream && contentLength < 0;
        head = requestHead(host);
        RouteTraffic traffic = route.traffic();
        if (traffic != null && traffic.mirrors() != null) { // request mirroring (docs/traffic.md)
            mirror = io.sluice.server.http.Mirror.begin(traffic.mirrors(), contentLength, endStream, conn.pool,
                    conn.scheduler, this::shadowHead);
        }
        host.requestStarted();
        if (grpc) {
            long t = Grpc.timeoutNanos(h.get("grpc-timeout"));
            if (t >= 0) {
                callDeadline = start + Math.min(t, route.timeoutNanos());
                timer.arm(callDeadline);
            }
        }
        Channel pooled = conn.pool.acquire(host);
        if (pooled != null) {
            attach(pooled);
            state = State.PROXYING;
            writeHead();
        } else {
            connect();
        }
    }

    // ---------------------------------------------------------------- policies (as HttpProxyHandler)

    /**
     * The cluster (a weighted split's side, by hash key when sticky), its {@code max_requests}
     * breaker, and the host (the hash key's, below {@code max_host_requests}). False: answered
     * (503 with {@code x-sluice-overloaded} / gRPC UNAVAILABLE). Without traffic rules, a retry
     * policy or a per-host limit this is the route's cluster, one counter and one pick.
     */
    private boolean admit(Http2Headers h, java.util.function.Function<String, String> fields) {
        RouteTraffic traffic = route.traffic();
        long key = io.sluice.lb.Hashing.NO_KEY;
        if (traffic == null) {
            cluster = route.cluster();
            policies = route.policies();
        } else { // weighted clusters, hash balancing (docs/traffic.md)
            key = traffic.key(fields, null, conn::clientIp);
            cluster = traffic.cluster(route.cluster(), key);
            policies = route.policiesFor(cluster);
        }
        CircuitBreaker br = policies.breaker();
        if (!br.tryRequest()) {
            respondError(503, "cluster " + cluster.name() + " is at its max_requests limit", RequestOutcome.OVERLOADED);
            return false;
        }
        requestSlot = true;
        RetryPolicy rp = route.retryPolicy();
        if (rp != null || br.config().maxHostRequests() != 0) {
            retry = new RetryState();
            retry.begin(rp, policies);
            host = retry.pick(cluster, key);
            if (host == null && retry.pickOverflowed()) {
                respondError(503, "every host of cluster " + cluster.name() + " is at its max_host_requests limit",
                        RequestOutcome.OVERLOADED);
                return false;
            }
        } else {
            host = RouteTraffic.pick(cluster, key);
        }
        if (host == null) {
            respondError(503, "no healthy host in cluster " + cluster.name(), RequestOutcome.NO_HEALTHY_HOST);
            return false;
        }
        return true;
    }

    private TrafficHeaders trafficHeaders() {
        if (trafficHeaders == null) {
            trafficHeaders = new TrafficHeaders();
        }
        return trafficHeaders;
    }

    /** The Host / :authority for {@code h}: the route's host rewrite, else the upstream's address unless preserve_host. */
    private String hostValue(Host h) {
        return route.hostFor(h, !options.preserveHost() ? h.address() : authority);
    }

    /**
     * The HTTP/1.1 request head for {@code h} (translation, X-Forwarded-*, ids, trace context, header
     * rules, the client identity, the attempt count), built again for every attempt.
     */
    private ByteBuf requestHead(Host h) {
        boolean xf = options.xForwarded();
        ByteBuf out = H2Translation.requestHead(ctx.alloc(), method, forward, hostValue(h), received, chunked,
                xf ? (conn.clientIp() == null ? "unknown" : conn.clientIp()) : null, xf && conn.trusted(options), authority);
        HeaderRuleSet rules = route.requestRules(cluster);
        RequestTracing tracing = options.tracing();
        if (rules != null || tracing != null) { // route rules: ids, trace context, header rules
            out = trafficHeaders().request(ctx.alloc(), out, received.get("x-request-id"), received.get("traceparent"),
                    tracing, rules, conn.clientIp(), route.name(), h.address());
        }
        io.sluice.server.tls.TlsRequests tls = conn.tls();
        if (tls != null) { // TLS: the verified identity replaces the client's field; X-Forwarded-Proto https
            out = tls.rewrite(ctx.alloc(), out);
        }
        RetryPolicy p = retry == null ? null : retry.policy();
        if (p != null && (retry.attempt() > 1 || p.includeAttemptCount())) {
            out = AttemptHeader.add(ctx.alloc(), out, retry.attempt());
        }
        return out;
    }

    /** The HEADERS for an h2c upstream stream to {@code h}: the client's, with the route's path and authority, ids, rules, attempt. */
    private Http2Headers upstreamHeaders(Host h) {
        Http2Headers out = new DefaultHttp2Headers(true, received.size() + 2);
        for (java.util.Map.Entry<CharSequence, CharSequence> e : received) {
            out.add(e.getKey(), e.getValue());
        }
        out.path(forward);
        out.authority(hostValue(h));
        HeaderRuleSet rules = route.requestRules(cluster);
        RequestTracing tracing = options.tracing();
        if (rules != null || tracing != null) {
            trafficHeaders().request(out, tracing, rules, conn.clientIp(), route.name(), h.address());
        }
        RetryPolicy p = retry == null ? null : retry.policy();
        if (p != null && (retry.attempt() > 1 || p.includeAttemptCount())) {
            out.set(AttemptHeader.NAME, Integer.toString(retry.attempt()));
        }
        return out;
    }

    /** The response header list for the client: the echoed request id and the response rules (in place; no-op without them). */
    void responseHeaders(Http2Headers out) {
        HeaderRuleSet rules = route.responseRules(cluster);
        RequestTracing tracing = options.tracing();
        if (rules != null || tracing != null) {
            trafficHeaders().response(out, tracing, rules, conn.clientIp(), route.name(), host == null ? null : host.address());
        }
    }

    private void releasePendingSlot() {
        if (pendingSlot) {
            pendingSlot = false;
            policies.breaker().pending().release();
        }
    }

    /** The HTTP/1.1 head of a mirror to {@code cluster}: as forwarded, with the {@code -shadow} host and {@code Connection: close}. */
    private ByteBuf shadowHead(String cluster) {
        boolean xf = options.xForwarded();
        return io.sluice.server.http.Mirror.closing(ctx.alloc(), H2Translation.requestHead(ctx.alloc(), method, forward,
                io.sluice.server.http.Mirror.shadowHost(authority), received, chunked,
                xf ? (conn.clientIp() == null ? "unknown" : conn.clientIp()) : null, xf && conn.trusted(options), authority));
    }

    /**
     * Writes a piece of the request upstream ({@code payload}: its body bytes, 0 for chunk framing),
     * keeping it for a retry's replay and feeding the mirrors when they apply.
     */
    private void writeUp(ByteBuf b, int payload) {
        if (retry != null) {
            retry.keep(b);
        }
        if (mirror != null) {
            io.sluice.server.http.Mirror.body(mirror, b, payload, false);
        }
        upstream.write(b, upstream.voidPromise());
    }

    /**
     * HTTP/1.1 upstream: the current attempt failed ({@code f}; {@code status} for a response). If
     * the route's policy retries it (the response not started, attempts left, the back-off ending
     * before the route's deadline, the budget allowing it), leaves the attempt ({@code report} to
     * outlier detection when not null) and schedules the next one. False: answer the failure.
     */
    private boolean retryAttempt(RetryPolicy.Failure f, int status, Outcome report) {
        RetryPolicy p = retry == null ? null : retry.policy();
        if (p == null || !retry.active() || responseStarted || state == State.DONE
                || !p.retriesHttp(f, status, p.replaySafe(method))) {
            return false;
        }
        long delay = p.backoffNanos(retry.attempt(), lc.retryJitter());
        if (overallDeadline != 0 && ticker.nanoTime() + delay - overallDeadline >= 0) {
            return false;
        }
        if (!retry.tryRetry()) {
            return false;
        }
        if (upstream != null) {
            detachUpstream().close();
        }
        if (report != null) {
            cluster.onOutcome(host, report);
        }
        releasePendingSlot();
        host.requestFinished();
        host = null;
        attemptId++;
        connectDeadline = 0;
        responseDeadline = 0;
        state = State.CONNECTING; // DATA queues until the next attempt is connected
        ctx.channel().config().setAutoRead(false);
        int id = attemptId;
        retry.backoff = conn.scheduler.schedule(() -> nextAttempt(id), delay);
        return true;
    }

    /** The back-off is over: a host not tried yet, the head again, connect (the body is replayed once connected). */
    private void nextAttempt(int id) {
        if (id != attemptId || state != State.CONNECTING || host != null) {
            return;
        }
        retry.backoff = null;
        Host h = retry.pick(cluster);
        if (h == null) {
            releaseQueue();
            respondError(503, "no host of cluster " + cluster.name() + " left to retry on",
                    retry.pickOverflowed() ? RequestOutcome.OVERLOADED : RequestOutcome.NO_HEALTHY_HOST);
            return;
        }
        host = h;
        h.requestStarted();
        releaseHead();
        head = requestHead(h);
        connect();
    }

    /**
     * h2c upstream ({@link H2Forward}): the upstream stream failed before its response ({@code f};
     * {@code status} for a 5xx head). If the policy retries it, the forwarder is restarted after
     * the back-off on a host not tried yet ({@link H2Forward#restart}). False: fail as before.
     */
    boolean retryForward(RetryPolicy.Failure f, int status, boolean refused) {
        RetryPolicy p = retry == null ? null : retry.policy();
        if (p == null || state == State.DONE) {
            return false;
        }
        boolean wanted = refused ? p.retriesRefusedStream()
                : p.retriesHttp(f, status, p.replaySafe(method));
        if (!wanted) {
            return false;
        }
        long delay = p.backoffNanos(retry.attempt(), lc.retryJitter());
        if (callDeadline != 0 && ticker.nanoTime() + delay - callDeadline >= 0) {
            return false;
        }
        if (!retry.tryRetry()) {
            return false;
        }
        cluster.onOutcome(host, f == RetryPolicy.Failure.STATUS ? Outcome.SERVER_ERROR
                : f == RetryPolicy.Failure.CONNECT_FAILURE ? Outcome.CONNECT_FAILURE : Outcome.RESET);
        host.requestFinished();
        host = null;
        int id = ++attemptId;
        retry.backoff = conn.scheduler.schedule(() -> nextForward(id), delay);
        return true;
    }

    private void nextForward(int id) {
        if (id != attemptId || state == State.DONE || host != null) {
            return;
        }
        retry.backoff = null;
        Host h = retry.pick(cluster);
        if (h == null) {
            h2Upstream.cancel();
            respondError(503, "no host of cluster " + cluster.name() + " left to retry on",
                    retry.pickOverflowed() ? RequestOutcome.OVERLOADED : RequestOutcome.NO_HEALTHY_HOST);
            return;
        }
        host = h;
        h.requestStarted();
        h2Upstream.restart(h, upstreamHeaders(h));
    }

    private static PathNormalizer.EscapedSlashes escapedSlashes(HttpOptions o) {
        return switch (o.path().escapedSlashes()) {
            case REJECT -> PathNormalizer.EscapedSlashes.REJECT;
            case KEEP -> PathNormalizer.EscapedSlashes.KEEP;
            case DECODE -> PathNormalizer.EscapedSlashes.DECODE;
        };
    }

    /** The content-length, -1 when absent, -2 when malformed. */
    private static long contentLength(Http2Headers h) {
        CharSequence v = h.get("content-length");
        if (v == null) {
            return -1;
        }
        if (v.length() == 0 || v.length() > 18) {
            return -2;
        }
        long n = 0;
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c < '0' || c > '9') {
                return -2;
            }
            n = n * 10 + (c - '0');
        }
        return n;
    }

    private void onRequestData(Http2DataFrame d) {
        switch (state) {
            case CONNECTING -> queue.add(d);
            case PROXYING -> {
                if (requestComplete) {
                    d.release(); // after the response ended early
                    return;
                }
                ByteBuf content = d.content();
                int n = content.readableBytes();
                lastBodyAt = ticker.nanoTime();
                bodyBytes += n;
                long max = options.maxRequestBodyBytes();
                if (max > 0 && bodyBytes > max) {
                    d.release();
                    abortUpstream(null);
                    respondError(413, "request body exceeds the limit of " + max + " bytes", RequestOutcome.BODY_TOO_LARGE);
                    return;
                }
                boolean last = d.isEndStream();
                if (n > 0) {
                    if (chunked) {
                        ByteBuf size = ctx.alloc().buffer(10);
                        ByteBufUtil.writeAscii(size, Integer.toHexString(n));
                        size.writeBytes(CRLF);
                        writeUp(size, 0);
                        writeUp(content, n);
                        writeUp(ctx.alloc().buffer(2).writeBytes(CRLF), 0);
                    } else {
                        writeUp(content, n);
                    }
                } else {
                    d.release();
                }
                if (last) {
                    if (chunked) {
                        writeUp(ctx.alloc().buffer(5).writeBytes(LAST_CHUNK), 0);
                    }
                    requestDone();
                }
            }
            default -> d.release();
        }
    }

    private void onRequestTrailers(Http2HeadersFrame f) {
        if (state == State.CONNECTING) {
            queue.add(f);
            return;
        }
        if (state != State.PROXYING || requestComplete) {
            return;
        }
        if (chunked) {
            writeUp(H2Translation.trailerSection(ctx.alloc(), f.headers()), 0);
        } // with a content-length the trailers cannot go on an HTTP/1.1 hop: dropped
        requestDone();
    }

    private void requestDone() {
        requestComplete = true;
        lastBodyAt = 0;
        if (mirror != null) { // the body is complete: the mirrors go
            io.sluice.server.http.Mirror.body(mirror, io.netty.buffer.Unpooled.EMPTY_BUFFER, 0, true);
        }
        if (!responseStarted) {
            armResponseDeadline();
        }
    }

    /** The route timeout; with a retry policy it bounds all attempts and a per-try timeout each. */
    private void armResponseDeadline() {
        long now = ticker.nanoTime();
        long due = now + route.timeoutNanos();
        RetryPolicy p = retry == null ? null : retry.policy();
        if (p != null) {
            if (overallDeadline == 0) {
                overallDeadline = due;
            } else {
                due = overallDeadline;
            }
            if (p.perTryTimeoutNanos() != 0) {
                due = Math.min(due - now, p.perTryTimeoutNanos()) + now;
            }
        }
        responseDeadline = due;
        timer.arm(responseDeadline);
    }

    /** The client reset the stream (RST_STREAM, e.g. a cancelled call): the upstream side goes too. */
    private void onClientReset() {
        if (state == State.DONE) {
            return;
        }
        state = State.DONE;
        abortUpstream(null);
        drainReads();
        releaseQueue();
        finish(RequestOutcome.CLIENT_CLOSED, responseStarted ? status : 0);
    }

    private void writeHead() {
        upstreamHandler.expectBodylessResponse("HEAD".equals(method));
        ByteBuf h = head;
        head = null;
        upstream.write(h, upstream.voidPromise());
        if (requestComplete) {
            requestDone();
        }
    }

    private void connect() {
        state = State.CONNECTING;
        ctx.channel().config().setAutoRead(false);
        // ---- resilience: max_pending_requests and max_connections (as HttpProxyHandler)
        CircuitBreaker br = policies.breaker();
        if (!br.pending().tryAcquire()) {
            releaseQueue();
            respondError(503, "cluster " + cluster.name() + " is at its max_pending_requests limit", RequestOutcome.OVERLOADED);
            return;
        }
        pendingSlot = true;
        if (!br.connections().tryAcquire()) {
            releaseQueue();
            respondError(503, "cluster " + cluster.name() + " is at its max_connections limit", RequestOutcome.OVERLOADED);
            return;
        }
        connectDeadline = ticker.nanoTime() + cluster.config().connectTimeout().toNanos();
        timer.arm(connectDeadline);
        Host target = host;
        ClusterBalancer c = cluster;
        HttpUpstreamPool pool = conn.pool;
        int id = attemptId;
        pool.connect(target, c.config()).addListener((ChannelFuture f) -> {
            if (f.isSuccess()) {
                f.channel().closeFuture().addListener(x -> br.connections().release());
            } else {
                br.connections().release();
            }
            onConnected(f, target, c, pool, id);
        });
    }

    private void onConnected(ChannelFuture f, Host target, ClusterBalancer c, HttpUpstreamPool pool, int id) {
        if (state != State.CONNECTING || target != host || id != attemptId) {
            if (f.isSuccess()) {
                pool.release(target, f.channel(), c.config()); // the stream died meanwhile; keep the connection
            }
            return;
        }
        connectDeadline = 0;
        releasePendingSlot();
        if (!f.isSuccess()) {
            boolean timeout = f.cause() instanceof ConnectTimeoutException;
            c.onOutcome(target, Outcome.CONNECT_FAILURE);
            if (retryAttempt(RetryPolicy.Failure.CONNECT_FAILURE, 0, null)) {
                return;
            }
            releaseQueue();
            respondError(timeout ? 504 : 502, (timeout ? "timed out connecting to " : "cannot connect to ")
                    + target.address() + " of cluster " + c.name(),
                    timeout ? RequestOutcome.CONNECT_TIMEOUT : RequestOutcome.CONNECT_FAILURE);
            return;
        }
        attach(f.channel());
        state = State.PROXYING;
        boolean replay = retry != null && retry.hasReplay();
        writeHead();
        if (replay) { // ---- resilience: a retry replays the body sent so far
            retry.replay(b -> upstream.write(b, upstream.voidPromise()));
        }
        Object m;
        while (state == State.PROXYING && (m = queue.poll()) != null) {
            if (m instanceof Http2DataFrame d) {
                onRequestData(d);
            } else if (m instanceof Http2HeadersFrame t) {
                onRequestTrailers(t);
            }
        }
        if (upstream != null) {
            upstream.flush();
            setClientRead(upstream.isWritable());
        }
    }

    // ---------------------------------------------------------------- upstream

    private void attach(Channel ch) {
        upstream = ch;
        upstreamHandler = UpstreamHandler.of(ch);
        upstreamHandler.owner(this);
        upstreamHandler.dechunk(true); // DATA frames carry the payload only
        ch.config().setAutoRead(ctx.channel().isWritable());
        setClientRead(ch.isWritable());
    }

    private Channel detachUpstream() {
        Channel up = upstream;
        upstream = null;
        upstreamHandler.owner(null);
        upstreamHandler.dechunk(false);
        upstreamHandler = null;
        return up;
    }

    private void abortUpstream(Outcome outcome) {
        if (h2Upstream != null) { // http2: the h2c upstream stream is reset (CANCEL)
            h2Upstream.cancel();
        }
        if (upstream != null) {
            detachUpstream().close();
        }
        if (outcome != null && host != null) {
            cluster.onOutcome(host, outcome);
        }
    }

    @Override
    public void onUpstreamRead(Object msg) {
        if (state != State.PROXYING) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof HttpHead resp) {
            if (resp.status() < 200) {
                if (resp.status() == 101 || resp.contentLength() > 0 || resp.isChunked()) {
                    upstreamHandler.markDirty(ClusterMetrics.RETIRED_BODY_NOT_ALLOWED);
                }
                resp.release(); // interim responses are not relayed
                return;
            }
            if (responseStarted) {
                resp.release();
                abortUpstream(Outcome.RESET);
                resetStream(RequestOutcome.UPSTREAM_RESET);
                return;
            }
            if (retry != null && retry.active() && retryAttempt(RetryPolicy.Failure.STATUS, resp.status(), // ---- resilience
                    resp.status() >= 500 ? Outcome.SERVER_ERROR : Outcome.SUCCESS)) {
                resp.release();
                return;
            }
            responseStarted = true;
            responseDeadline = 0;
            status = resp.status();
            upstreamKeepAlive = resp.isKeepAlive() && !resp.isCloseDelimited();
            if (resp.isComplete() && (resp.contentLength() > 0 || resp.isChunked())) {
                upstreamHandler.markDirty(ClusterMetrics.RETIRED_BODY_NOT_ALLOWED);
            }
            Http2Headers out = H2Translation.responseHeaders(resp);
            responseHeaders(out); // traffic: echoed request id, response header rules
            boolean complete = resp.isComplete();
            resp.release();
            ctx.write(new DefaultHttp2HeadersFrame(out, complete), ctx.voidPromise());
            if (complete) {
                onResponseComplete();
            }
        } else if (msg instanceof HttpBody b) {
            if (!responseStarted) {
                b.release();
                return;
            }
            bytesOut += b.payloadBytes();
            boolean last = b.isLast();
            ctx.write(new DefaultHttp2DataFrame(b.content(), last), ctx.voidPromise());
            if (last) {
                onResponseComplete();
            }
        } else if (msg instanceof HttpDecodeError err) {
            abortUpstream(Outcome.RESET);
            if (responseStarted) {
                resetStream(RequestOutcome.UPSTREAM_RESET);
            } else if (!retryAttempt(RetryPolicy.Failure.RESET, 0, null)) {
                respondError(502, "malformed response from upstream " + host.address() + ": " + err.reason(),
                        RequestOutcome.UPSTREAM_RESET);
            }
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    private void onResponseComplete() {
        Channel up = detachUpstream();
        if (upstreamKeepAlive && requestComplete && up.isActive()) {
            up.config().setAutoRead(true);
            conn.pool.release(host, up, cluster.config());
        } else {
            up.close();
        }
        cluster.onOutcome(host, status >= 500 ? Outcome.SERVER_ERROR : Outcome.SUCCESS);
        state = State.DONE;
        drainReads();
        ctx.flush();
        if (!requestComplete) {
            // answered before the request ended (RFC 9113 §8.1): the rest of it is not wanted
            ctx.writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.NO_ERROR), ctx.voidPromise());
        }
        finish(RequestOutcome.PROXIED, status);
    }

    @Override
    public void onUpstreamReadComplete() {
        ctx.flush();
        Channel up = upstream;
        if (up != null && !ctx.channel().isWritable()) {
            up.config().setAutoRead(false);
        }
    }

    @Override
    public void onUpstreamWritabilityChanged() {
        Channel up = upstream;
        if (up != null && state == State.PROXYING) {
            setClientRead(up.isWritable());
        }
    }

    @Override
    public void onUpstreamError(Throwable cause) {
        // the close that follows reports it through onUpstreamInactive
    }

    @Override
    public void onUpstreamInactive(Channel ch) {
        if (ch != upstream) {
            return;
        }
        upstream = null;
        upstreamHandler = null;
        cluster.onOutcome(host, Outcome.RESET);
        if (responseStarted) {
            resetStream(RequestOutcome.UPSTREAM_RESET);
        } else if (!retryAttempt(RetryPolicy.Failure.RESET, 0, null)) {
            respondError(502, "upstream " + host.address() + " closed the connection before responding",
                    RequestOutcome.UPSTREAM_RESET);
        }
    }

    // ---------------------------------------------------------------- timers

    private void onTimer() {
        if (state == State.DONE) {
            return;
        }
        long now = ticker.nanoTime();
        long next = Long.MAX_VALUE;
        if (unwritable) {
            long due = unwritableSince + options().writeTimeout().toNanos();
            if (now - due >= 0) {
                lc.metrics().writeTimedOut();
                abortUpstream(null);
                resetStream(RequestOutcome.WRITE_TIMEOUT);
                return;
            }
            next = due;
        }
        if (lastBodyAt != 0 && !requestComplete && ctx.channel().config().isAutoRead()) {
            long due = lastBodyAt + options().requestBodyTimeout().toNanos();
            if (now - due >= 0) {
                abortUpstream(null); // cut off mid-request; the upstream is not at fault
                if (responseStarted) {
                    resetStream(RequestOutcome.BODY_TIMEOUT);
                } else {
                    respondError(408, "request body: no DATA received for " + options().requestBodyTimeout().toMillis()
                            + " ms", RequestOutcome.BODY_TIMEOUT);
                }
                return;
            }
            next = Math.min(next, due);
        }
        if (callDeadline != 0) {
            if (now - callDeadline >= 0) {
                abortUpstream(host != null && state == State.PROXYING ? Outcome.TIMEOUT : null);
                if (responseStarted || (h2Upstream != null && h2Upstream.responseStarted())) {
                    resetStream(RequestOutcome.UPSTREAM_TIMEOUT);
                } else {
                    respondError(504, "deadline (grpc-timeout) exceeded", RequestOutcome.UPSTREAM_TIMEOUT);
                }
                return;
            }
            next = Math.min(next, callDeadline);
        }
        if (state == State.CONNECTING && connectDeadline != 0) {
            if (now - connectDeadline >= 0) {
                connectDeadline = 0;
                cluster.onOutcome(host, Outcome.CONNECT_FAILURE);
                releasePendingSlot();
                if (retryAttempt(RetryPolicy.Failure.CONNECT_FAILURE, 0, null)) {
                    return;
                }
                releaseQueue();
                respondError(504, "timed out connecting to " + host.address() + " of cluster " + cluster.name(),
                        RequestOutcome.CONNECT_TIMEOUT);
                return;
            }
            next = Math.min(next, connectDeadline);
        }
        if (state == State.PROXYING && responseDeadline != 0) {
            if (now - responseDeadline >= 0) {
                abortUpstream(Outcome.TIMEOUT);
                if (overallDeadline != 0 && now - overallDeadline < 0 // a per-try timeout
                        && retryAttempt(RetryPolicy.Failure.TIMEOUT, 0, null)) {
                    return;
                }
                respondError(504, "upstream " + host.address() + " did not respond within "
                        + TimeUnit.NANOSECONDS.toMillis(route.timeoutNanos()) + " ms", RequestOutcome.UPSTREAM_TIMEOUT);
                return;
            }
            next = Math.min(next, responseDeadline);
        }
        if (next != Long.MAX_VALUE) {
            timer.arm(next);
        }
    }

    // ---------------------------------------------------------------- answers

    /**
     * Answers the stream with the gateway's own error: an HTTP status and a text body, or for
     * gRPC a Trailers-Only response. If the request is still coming, RST_STREAM(NO_ERROR) follows.
     */
    /** The route's redirect or direct response (h2c: the request's scheme is http). */
    private void respondLocal(String authority, String target) {
        state = State.DONE;
        drainReads();
        releaseQueue();
        releaseHead();
        int code = LocalAnswers.status(route);
        RouteRules rules = route.rules();
        Http2Headers h = new DefaultHttp2Headers().status(Integer.toString(code));
        byte[] body = new byte[0];
        if (rules.redirect() != null) {
            h.set("location", LocalAnswers.location(rules.redirect(), route, authority, target, false));
        } else {
            body = LocalAnswers.body(rules.directResponse());
            if (body.length > 0) {
                h.set("content-type", LocalAnswers.contentType(rules.directResponse()));
            }
        }
        h.setInt("content-length", body.length);
        finish(RequestOutcome.LOCAL, code);
        boolean withBody = body.length > 0 && !"HEAD".equals(method);
        ctx.write(new DefaultHttp2HeadersFrame(h, !withBody), ctx.voidPromise());
        if (withBody) {
            ctx.write(new DefaultHttp2DataFrame(ctx.alloc().buffer(body.length).writeBytes(body), true), ctx.voidPromise());
        }
        if (!requestComplete) {
            ctx.write(new DefaultHttp2ResetFrame(Http2Error.NO_ERROR), ctx.voidPromise());
        }
        ctx.flush();
    }

    private void respondError(int code, String reason, RequestOutcome outcome) {
        respondError(code, reason, outcome, null);
    }

    /** @param retryAfter the Retry-After seconds of a 429 (not for gRPC: UNAVAILABLE says it), or null */
    private void respondError(int code, String reason, RequestOutcome outcome, String retryAfter) {
        state = State.DONE;
        drainReads();
        releaseQueue();
        releaseHead();
        Http2Headers h = new DefaultHttp2Headers();
        if (grpc) {
            int gs = Grpc.statusOf(outcome, code);
            h.status("200").set("content-type", GRPC_CONTENT_TYPE)
                    .set("grpc-status", Integer.toString(gs)).set("grpc-message", Grpc.percentEncode(reason));
            finish(outcome, 200);
            ctx.write(new DefaultHttp2HeadersFrame(h, true), ctx.voidPromise());
        } else {
            byte[] body = (reason + "\n").getBytes(StandardCharsets.UTF_8);
            h.status(Integer.toString(code)).set("content-type", "text/plain; charset=utf-8")
                    .setInt("content-length", body.length);
            if (outcome == RequestOutcome.OVERLOADED) { // the shed header, as HTTP/1.1's ErrorResponses.overloaded
                h.set("x-sluice-overloaded", "true");
            } else if (retryAfter != null) {
                h.set("retry-after", retryAfter);
            }
            finish(outcome, code);
            ctx.write(new DefaultHttp2HeadersFrame(h, false), ctx.voidPromise());
            ctx.write(new DefaultHttp2DataFrame(ctx.alloc().buffer(body.length).writeBytes(body), true), ctx.voidPromise());
        }
        if (!requestComplete) {
            ctx.write(new DefaultHttp2ResetFrame(Http2Error.NO_ERROR), ctx.voidPromise());
        }
        ctx.flush();
    }

    /** The response started and cannot be finished: RST_STREAM so it does not look complete. */
    private void resetStream(RequestOutcome outcome) {
        state = State.DONE;
        drainReads();
        releaseQueue();
        finish(outcome, status);
        ctx.writeAndFlush(new DefaultHttp2ResetFrame(outcome == RequestOutcome.UPSTREAM_TIMEOUT
                ? Http2Error.CANCEL : Http2Error.INTERNAL_ERROR), ctx.voidPromise());
    }

    /** http2: the forwarded stream ended (response complete, reset, client gone). */
    void forwardEnded(RequestOutcome outcome, int code, long bytes) {
        state = State.DONE;
        bytesOut = bytes;
        finish(outcome, code);
    }

    /** http2: no response came from the h2c upstream: the gateway's own error (gRPC: UNAVAILABLE). */
    void forwardFailed(RequestOutcome outcome) {
        forwardFailed(outcome, null);
    }

    /** As {@link #forwardFailed(RequestOutcome)}, naming why when known (TLS, ALPN, connect error). */
    void forwardFailed(RequestOutcome outcome, String why) {
        if (state == State.DONE) {
            return;
        }
        respondError(502, why != null ? why : (outcome == RequestOutcome.CONNECT_FAILURE ? "cannot connect to " : "reset by ")
                + host.address() + " of cluster " + cluster.name(), outcome);
    }

    private void finish(RequestOutcome outcome, int code) {
        if (finished) {
            return;
        }
        finished = true;
        timer.cancel();
        RequestEnd e = end.reset();
        e.route = route;
        e.outcome = outcome;
        e.status = code;
        e.durationNanos = ticker.nanoTime() - start;
        e.host = host;
        e.bytesOut = bytesOut;
        // ---- resilience: attempts, the retry state, the breaker slots
        if (retry != null) {
            e.attempts = retry.attempt();
            retry.end(outcome == RequestOutcome.PROXIED && code < 500);
        }
        releasePendingSlot();
        if (requestSlot) {
            requestSlot = false;
            policies.breaker().requestDone();
        }
        if (mirror != null) {
            io.sluice.server.http.Mirror.exchangeEnded(mirror);
            mirror = null;
        }
        if (lc.accessLog() != null) {
            e.traceId = trafficHeaders == null ? null : trafficHeaders.logId();
            e.client = conn.clientIp();
            e.target = method + " " + target;
        }
        if (host != null) {
            host.requestFinished();
        }
        lc.requestEnded(e);
        conn.streamEnded();
    }

    /** Reads the client's DATA (so returns it window) or not; the body timeout counts only while reading. */
    private void setClientRead(boolean on) {
        if (ctx.channel().config().isAutoRead() != on) {
            ctx.channel().config().setAutoRead(on);
            if (on && lastBodyAt != 0) {
                lastBodyAt = ticker.nanoTime();
            }
        }
    }

    /** Done with the stream: read (and release) whatever the client still sends on it. */
    private void drainReads() {
        if (!ctx.channel().config().isAutoRead()) {
            ctx.channel().config().setAutoRead(true);
        }
    }

    private void releaseHead() {
        if (head != null) {
            head.release();
            head = null;
        }
    }

    private void releaseQueue() {
        Object m;
        while ((m = queue.poll()) != null) {
            ReferenceCountUtil.release(m);
        }
    }
}
