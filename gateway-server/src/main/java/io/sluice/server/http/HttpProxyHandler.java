package io.sluice.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.ReferenceCountUtil;
import io.sluice.codec.http.HttpBody;
import io.sluice.codec.http.HttpDecodeError;
import io.sluice.codec.http.HttpHead;
import io.sluice.codec.http.ProxyHeads;
import io.sluice.core.cluster.Host;
import io.sluice.core.cluster.Outcome;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.time.Scheduler;
import io.sluice.core.time.Ticker;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.channel.ConnectionTimer;
import io.sluice.server.channel.DrainEvent;
import io.sluice.server.channel.LingeringCloseHandler;
import io.sluice.server.channel.RequestEnd;
import io.sluice.server.tls.TlsRequests;
import io.sluice.server.metrics.ClusterMetrics;
import io.sluice.server.metrics.RequestOutcome;
import io.sluice.server.policy.breaker.CircuitBreaker;
import io.sluice.server.policy.ratelimit.RouteLimits;
import io.sluice.server.policy.retry.AttemptHeader;
import io.sluice.server.policy.retry.RetryPolicy;
import io.sluice.server.policy.retry.RetryState;
import io.sluice.server.route.Route;
import io.sluice.server.route.RouteTable;
import io.sluice.server.http.rules.HeaderRuleSet;
import io.sluice.server.http.rules.TrafficHeaders;
import io.sluice.server.http2.H2cUpgrade;
import io.sluice.server.route.RouteTraffic;
import io.sluice.server.tls.upstream.UpstreamTlsException;

import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * The downstream end of an HTTP/1.1 proxied connection: {@code http-proxy}, the last handler of
 * {@code [meter →] http-read-marker → http-decoder → http-proxy} ({@link io.sluice.server.channel.SluicePipeline}).
 * One request at a time: route, pick a host, borrow a keep-alive upstream connection of this event
 * loop (or open one), and stream the request body up and the response down without aggregating
 * either. Heads are forwarded as byte ranges of what arrived (see {@link ProxyHeads}); bodies as the
 * received slices, chunk framing included. Backpressure: when one side's outbound buffer is full,
 * reading from the other side stops until it drains. Everything runs on this connection's event
 * loop; the upstream connection is on the same loop, so there are no locks.
 *
 * <p>Buffer ownership: every {@link HttpHead} and {@link HttpBody} read is either written to the
 * other side (which then owns its bytes), queued (released if the exchange dies) or released here.
 *
 * <p>Timeouts share one lazily re-armed timer per connection, on the listener's {@link Scheduler}
 * for this event loop: idle keep-alive, request-head read (slowloris), request-body read (no byte
 * for {@code request_body_timeout} while the gateway reads an incomplete body), downstream write
 * (the client connection unwritable for {@code write_timeout}: a client that stopped reading),
 * upstream connect, and upstream response (time from request sent to response head). See "the one
 * timer" below for why each fires exactly at its deadline.
 */
final class HttpProxyHandler extends ChannelInboundHandlerAdapter implements UpstreamListener, UpgradeTunnel.EndListener {

    private enum State { AWAIT_HEAD, CONNECTING, PROXYING, DISCARDING, TUNNEL, CLOSED }

    private final HttpListenerContext lc;
    private ChannelHandlerContext ctx;
    private HttpUpstreamPool pool;
    private Scheduler scheduler;
    private Ticker ticker;
    private State state = State.AWAIT_HEAD;
    /** Messages held back: request parts while connecting, or a pipelined next request. */
    private final ArrayDeque<Object> queue = new ArrayDeque<>(4);
    /** The client's address and trust, worked out once per connection. */
    private ClientPeer peer;
    /** TLS hook: the connection's client-identity rules, looked up at the first request (after the handshake). */
    private TlsRequests tlsRequests;
    private boolean tlsLooked;

    // timers (nanos from the scheduler's ticker; 0 = not set)
    private ConnectionTimer timer;
    private long lastActivity;
    private long headStart;
    /** Draining: an idle connection closes at this time (0: not draining, or not idle when the drain began). */
    private long drainDeadline;
    /** The client connection is unwritable, since {@link #unwritableSince}. */
    private boolean unwritable;
    private long unwritableSince;

    /** The current exchange's state (one instance per connection, reused). */
    private final HttpExchange ex = new HttpExchange();
    // the current exchange's upstream side and connection-level response flags
    private Channel upstream;
    private UpstreamHandler upstreamHandler;
    private boolean closeAfterResponse;
    private boolean wroteUpstream;

    /** Request ids, trace context and header rules of this connection's exchanges (used only when configured). */
    private final TrafficHeaders trafficHeaders = new TrafficHeaders();

    /** This connection's request-end event, refilled for every exchange it finishes. */
    private final RequestEnd end;
    /** The current exchange's retry state (policy package), reused. */
    private final RetryState retry = new RetryState();

    HttpProxyHandler(HttpListenerContext lc) {
        this.lc = lc;
        this.end = new RequestEnd(lc.name(), "http", true);
    }

    // ---------------------------------------------------------------- downstream events

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.pool = lc.pool(ctx.executor());
        this.scheduler = lc.scheduler(ctx.executor());
        this.ticker = scheduler.ticker();
        this.timer = new ConnectionTimer(scheduler, this::onTimer);
        this.peer = new ClientPeer(ctx.channel());
    }

    /** HTTP/2 hook: the connection turned into HTTP/2 (h2c preface or upgrade); this handler retires. */
    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (state != State.CLOSED) {
            state = State.CLOSED;
            cancelTimer();
            releaseQueue();
            releaseRequest();
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        lc.metrics().connectionOpened();
        lastActivity = ticker.nanoTime();
        armTimer(lastActivity + lc.options().idleTimeout().toNanos());
        if (lc.draining()) {
            drain(); // accepted just before the listening socket closed: it missed the drain event
        }
        ctx.fireChannelActive();
    }

    /** Raw bytes arrived (called by {@link ReadMarkerHandler} before decoding). */
    void onBytes() {
        long now = ticker.nanoTime();
        lastActivity = now;
        if (state == State.AWAIT_HEAD && headStart == 0) {
            headStart = now;
            armTimer(now + lc.options().requestHeaderTimeout().toNanos());
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (state == State.CLOSED || !(msg instanceof HttpHead || msg instanceof HttpBody
                || msg instanceof HttpDecodeError)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof HttpDecodeError err && !ex.requestComplete
                && (state == State.CONNECTING || state == State.PROXYING || state == State.DISCARDING)) {
            onBodyError(err); // the body of the request in progress is malformed
            return;
        }
        if (!queue.isEmpty() || (state != State.AWAIT_HEAD && !(msg instanceof HttpBody))) {
            queue.add(msg); // pipelined, or waiting for the upstream connection
            updateRead();
            return;
        }
        dispatch(msg);
    }

    private void dispatch(Object msg) {
        if (msg instanceof HttpHead head) {
            onRequestHead(head);
        } else if (msg instanceof HttpBody body) {
            onRequestBody(body);
        } else if (msg instanceof HttpDecodeError err) {
            onDecodeError(err);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (wroteUpstream && upstream != null) {
            wroteUpstream = false;
            upstream.flush();
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        boolean writable = ctx.channel().isWritable();
        if (upstream != null) {
            upstream.config().setAutoRead(writable);
        }
        if (!writable) {
            if (!unwritable && state != State.CLOSED) {
                unwritable = true;
                unwritableSince = ticker.nanoTime();
                armTimer(unwritableSince + lc.options().writeTimeout().toNanos());
            }
        } else {
            unwritable = false;
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        State was = state;
        state = State.CLOSED;
        lc.metrics().connectionClosed();
        cancelTimer();
        releaseQueue();
        if (was == State.CONNECTING || was == State.PROXYING) {
            if (upstream != null) {
                detachUpstream().close(); // mid-exchange: the connection cannot be reused
            }
            finishExchange(RequestOutcome.CLIENT_CLOSED, ex.responseStarted ? ex.status : 0);
        } else {
            releaseRequest();
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // Downstream I/O errors (resets) end this connection only; channelInactive cleans up.
        ctx.close();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == DrainEvent.INSTANCE) {
            drain();
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    /**
     * The gateway drains. Every response from now on says {@code Connection: close} and the
     * connection closes after it. An idle connection (no request byte yet) stays open for
     * {@code drain_grace}: a request the client sent just before it learnt of the drain is still
     * answered; only then does it close. Closing at once would drop such a request unanswered.
     */
    private void drain() {
        closeAfterResponse = true;
        if (state == State.CLOSED || state != State.AWAIT_HEAD || headStart != 0 || !queue.isEmpty()) {
            return; // busy: it closes after its response (or its own timeout)
        }
        long grace = lc.options().drainGrace().toNanos();
        if (grace == 0) {
            ctx.close();
            return;
        }
        drainDeadline = ticker.nanoTime() + grace;
        armTimer(drainDeadline);
    }

    // ---------------------------------------------------------------- request

    private void beginExchange() {
        ex.exchangeId++;
        ex.start = ticker.nanoTime();
        headStart = 0;
        lc.metrics().requestStarted();
        ex.options = lc.options();
        ex.requestBodyBytes = 0;
        ex.responseStarted = false;
        ex.chunkResponse = false;
        ex.retried = false;
        ex.status = 0;
        ex.overallDeadline = 0;
    }

    private void onDecodeError(HttpDecodeError err) {
        beginExchange();
        ex.keepAlive = false;
        ex.requestHasBody = false;
        ex.requestComplete = true;
        switch (err.status()) {
            case 414 -> respondError(HttpResponseStatus.REQUEST_URI_TOO_LONG, err.reason(), RequestOutcome.URI_TOO_LONG, true);
            case 431 -> respondError(HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, err.reason(),
                    RequestOutcome.HEADERS_TOO_LARGE, true);
            case 400 -> respondError(HttpResponseStatus.BAD_REQUEST, "malformed request: " + err.reason(),
                    RequestOutcome.BAD_REQUEST, true);
            default -> respondError(HttpResponseStatus.valueOf(err.status()), err.reason(), RequestOutcome.BAD_REQUEST, true);
        }
    }

    private void onBodyError(HttpDecodeError err) {
        if (state == State.DISCARDING) {
            state = State.CLOSED;
            ctx.close();
            return;
        }
        abortUpstream(null);
        dropQueuedBody();
        if (ex.responseStarted) {
            finishExchange(RequestOutcome.BAD_REQUEST, ex.status);
            state = State.CLOSED;
            releaseQueue();
            ctx.close();
            return;
        }
        ex.requestComplete = true;
        if (err.status() == 431) {
            respondError(HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, err.reason(), RequestOutcome.HEADERS_TOO_LARGE, true);
        } else {
            respondError(HttpResponseStatus.BAD_REQUEST, "malformed request body: " + err.reason(),
                    RequestOutcome.BAD_REQUEST, true);
        }
    }

    /** TLS hook: the connection's {@link TlsRequests}, null on cleartext connections. */
    private TlsRequests tlsRequests() {
        if (!tlsLooked) {
            tlsLooked = true;
            tlsRequests = TlsRequests.of(ctx.channel());
        }
        return tlsRequests;
    }

    private void onRequestHead(HttpHead req) {
        if (lc.options().http2().h2cUpgrade() && H2cUpgrade.upgrade(ctx, lc, req)) {
            return; // HTTP/2 hook: an h2c Upgrade; the request is now stream 1 of the new HTTP/2 connection
        }
        beginExchange();
        ex.request = req;
        ex.method = req.method();
        ex.http10 = req.isHttp10();
        ex.keepAlive = req.isKeepAlive() && !lc.draining() && !closeAfterResponse;
        ex.requestHasBody = req.hasBody();
        ex.requestComplete = req.isComplete();
        ex.bodyRateStart = ex.requestComplete || ex.options.minRequestBodyRate() == 0 ? 0 : ex.start;
        ex.readsHeldSince = ex.bodyRateStart != 0 && !ctx.channel().config().isAutoRead() ? ex.start : 0;

        // Route on what the upstream will see: the authority of an absolute-form target (RFC 9112
        // §3.2.2) or else Host, and the normalized path (the one that is forwarded).
        String authority = req.authority();
        ex.hasAuthority = authority != null; // requestHead needs only this: no second String per attempt
        if (req.indexOf(HttpHead.HOST) < 0 && !ex.http10) {
            respondError(HttpResponseStatus.BAD_REQUEST, "missing Host header", RequestOutcome.BAD_REQUEST, true);
            return;
        }
        RouteTable table = lc.routes();
        String path = table.usesPath() ? req.path() : null;
        TlsRequests tls = tlsRequests(); // TLS hook: null on cleartext connections
        ex.route = table.routeHttp(table.usesHost() ? ProxyHeads.hostWithoutPort(authority) : null, path, ex.method,
                tls == null ? req::header : tls.headers(req::header));
        if (ex.route == null) {
            respondError(HttpResponseStatus.NOT_FOUND, "no route for " + ex.method + " " + req.path()
                    + (authority == null ? "" : " on host " + authority), RequestOutcome.NO_ROUTE, false);
            return;
        }
        RouteLimits limits = ex.route.rateLimits(); // rate limit hook (docs/rate-limits.md): decide → 429
        if (limits != null) {
            long wait = limits.decideHttp(req::header, ctx.channel().remoteAddress());
            if (wait != RouteLimits.ALLOWED) {
                respondError(HttpResponseStatus.TOO_MANY_REQUESTS, "rate limited on route " + ex.route.name(),
                        RequestOutcome.RATE_LIMITED, false, "retry-after: " + RouteLimits.retryAfterSeconds(wait) + "\r\n");
                return;
            }
        }
        if (ex.route.cluster() == null) { // route rules: the route answers by itself (redirect, direct response)
            respondLocal(req); // after the route's rate limits, before any cluster pick or breaker
            return;
        }
        long max = ex.options.maxRequestBodyBytes();
        if (max > 0 && req.contentLength() > max) {
            respondError(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "request body of " + req.contentLength()
                    + " bytes exceeds the limit of " + max, RequestOutcome.BODY_TOO_LARGE, true);
            return;
        }
        RouteTraffic traffic = ex.route.traffic();
        long key = io.sluice.lb.Hashing.NO_KEY;
        if (traffic == null) {
            ex.cluster = ex.route.cluster();
            ex.policies = ex.route.policies();
        } else { // weighted clusters, hash balancing (docs/traffic.md)
            key = traffic.key(req::header, null, peer::ip);
            ex.cluster = traffic.cluster(ex.route.cluster(), key);
            ex.policies = ex.route.policiesFor(ex.cluster);
        }
        if (ex.cluster.config().upstreamProtocol().http2()) { // http2: no HTTP/1.1 -> HTTP/2 translation yet (docs/http2.md)
            respondError(HttpResponseStatus.BAD_GATEWAY, "cluster " + ex.cluster.name() + " speaks HTTP/2 (upstream_protocol "
                    + ex.cluster.config().upstreamProtocol().jsonName() + "): only HTTP/2 clients can use it", RequestOutcome.CODEC_ERROR, false);
            return;
        }
        // ---- resilience: the cluster's max_requests breaker, then the retry state and the pick
        if (!ex.policies.breaker().tryRequest()) {
            respondError(HttpResponseStatus.SERVICE_UNAVAILABLE, "cluster " + ex.cluster.name()
                    + " is at its max_requests limit", RequestOutcome.OVERLOADED, false);
            return;
        }
        ex.requestSlot = true;
        if (req.hasHopByHop()) { // route rules: an Upgrade the route allows goes up with its Upgrade/Connection
            ex.upgrade = UpgradeTunnel.chosen(req, ex.route);
        }
        // an upgrade request is never retried: once it went up, the connection may be the tunnel
        retry.begin(ex.upgrade == null ? ex.route.retryPolicy() : null, ex.policies);
        ex.host = retry.pick(ex.cluster, key);
        if (ex.host == null && retry.pickOverflowed()) {
            respondError(HttpResponseStatus.SERVICE_UNAVAILABLE, "every host of cluster " + ex.cluster.name()
                    + " is at its max_host_requests limit", RequestOutcome.OVERLOADED, false);
            return;
        }
        // ---- end resilience
        if (ex.host == null) {
            respondError(HttpResponseStatus.SERVICE_UNAVAILABLE, "no healthy host in cluster " + ex.cluster.name(),
                    RequestOutcome.NO_HEALTHY_HOST, false);
            return;
        }
        boolean expect = req.expectsContinue();
        if (expect) {
            // Like nginx: the gateway itself invites the body once it knows where it goes.
            ctx.writeAndFlush(ErrorResponses.continueResponse(), ctx.voidPromise());
        }
        ByteBuf head = requestHead(ex.host);
        if (traffic != null && traffic.mirrors() != null) { // request mirroring (docs/traffic.md)
            boolean xf = ex.options.xForwarded();
            ex.mirror = Mirror.begin(traffic.mirrors(), ctx.alloc(), req, rewrittenTarget(req), xf ? peer.ip() : null,
                    xf && peer.trusted(ex.options), expect, ex.requestComplete, pool, scheduler);
        }
        if (lc.accessLog() == null && retry.policy() == null) {
            ex.request = null; // nothing needs the received head any more
            req.release();
        }
        ex.host.requestStarted();

        Channel pooled = pool.acquire(ex.host);
        if (pooled != null) {
            ex.reusedConnection = true;
            if (!ex.requestHasBody && idempotent(ex.method)) {
                ex.retryHead = head.retainedDuplicate(); // a stale parked connection may need it again
            }
            attach(pooled);
            state = State.PROXYING;
            writeHead(head);
        } else {
            ex.retryHead = head;
            connect();
        }
    }

    /** The target the route's prefix rewrite makes of the request's, or null when the route does not rewrite. */
    private String rewrittenTarget(HttpHead req) {
        if (!ex.route.rewrites()) {
            return null;
        }
        String forward = req.forwardTarget();
        return ex.route.rewrite(forward != null ? forward : req.target());
    }

    /**
     * The request head as sent to {@code h} (Host, rewrite, X-Forwarded-*, Upgrade, ids, trace
     * context, header rules, the client identity, the attempt count); built again for every attempt.
     */
    private ByteBuf requestHead(Host h) {
        HttpHead req = ex.request;
        String rewritten = rewrittenTarget(req);
        String hostOverride = ex.route.hostFor(h, !ex.options.preserveHost() || !ex.hasAuthority ? h.address() : null);
        boolean xf = ex.options.xForwarded();
        ByteBuf head = ProxyHeads.requestHead(ctx.alloc(), req, rewritten, hostOverride, xf ? peer.ip() : null,
                xf && peer.trusted(ex.options), req.expectsContinue());
        if (ex.upgrade != null) { // route rules: the allowed Upgrade with its Upgrade/Connection
            head = UpgradeTunnel.withUpgrade(ctx.alloc(), head, ex.upgrade);
        }
        HeaderRuleSet rules = ex.route.requestRules(ex.cluster);
        if (rules != null || ex.options.tracing() != null) { // route rules: ids, trace context, header rules
            head = trafficHeaders.request(ctx.alloc(), head, req, ex.options.tracing(), rules, peer.ip(),
                    ex.route.name(), h.address());
        }
        TlsRequests tls = tlsRequests();
        if (tls != null) {
            head = tls.rewrite(ctx.alloc(), head); // TLS hook: the client identity header
        }
        RetryPolicy p = retry.policy(); // ---- resilience: x-sluice-attempt
        if (p != null && (retry.attempt() > 1 || p.includeAttemptCount())) {
            head = AttemptHeader.add(ctx.alloc(), head, retry.attempt());
        }
        return head;
    }

    private void onRequestBody(HttpBody b) {
        switch (state) {
            case DISCARDING -> {
                boolean last = b.isLast();
                b.release();
                if (last) {
                    ex.requestComplete = true;
                    nextRequest();
                }
            }
            case CONNECTING, PROXYING -> {
                if (state == State.CONNECTING) {
                    queue.add(b); // counted and forwarded once connected
                    return;
                }
                long max = ex.options.maxRequestBodyBytes();
                ex.requestBodyBytes += b.payloadBytes();
                if (max > 0 && ex.requestBodyBytes > max) {
                    b.release();
                    abortUpstream(null);
                    respondError(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "request body exceeds the limit of "
                            + max + " bytes", RequestOutcome.BODY_TOO_LARGE, true);
                    return;
                }
                boolean last = b.isLast();
                if (last) {
                    ex.requestComplete = true;
                }
                retry.keep(b.content()); // ---- resilience: the replay buffer (no-op without a policy)
                if (ex.mirror != null) {
                    Mirror.body(ex.mirror, b.content(), b.payloadBytes(), last);
                }
                upstream.write(b.content(), upstream.voidPromise());
                wroteUpstream = true;
                if (last) {
                    armResponseDeadline();
                }
            }
            default -> b.release(); // no exchange to carry it
        }
    }

    private void writeHead(ByteBuf head) {
        upstreamHandler.expectBodylessResponse("HEAD".equals(ex.method));
        upstream.write(head, upstream.voidPromise());
        wroteUpstream = true;
        if (ex.requestComplete) {
            armResponseDeadline();
        }
    }

    private void armResponseDeadline() {
        long now = ticker.nanoTime();
        long due = now + ex.route.timeoutNanos();
        RetryPolicy p = retry.policy();
        if (p != null) { // ---- resilience: the route timeout bounds all attempts, a per-try timeout each
            if (ex.overallDeadline == 0) {
                ex.overallDeadline = due;
            } else {
                due = ex.overallDeadline;
            }
            if (p.perTryTimeoutNanos() != 0) {
                due = earlier(due, now + p.perTryTimeoutNanos());
            }
        }
        ex.responseDeadline = due;
        armTimer(ex.responseDeadline);
    }

    private void connect() {
        state = State.CONNECTING;
        updateRead();
        int id = ex.exchangeId;
        Host target = ex.host;
        ClusterBalancer c = ex.cluster;
        // ---- resilience: max_pending_requests and max_connections
        CircuitBreaker br = ex.policies.breaker();
        if (!br.pending().tryAcquire()) {
            dropQueuedBody();
            respondError(HttpResponseStatus.SERVICE_UNAVAILABLE, "cluster " + c.name()
                    + " is at its max_pending_requests limit", RequestOutcome.OVERLOADED, false);
            return;
        }
        ex.pendingSlot = true;
        if (!br.connections().tryAcquire()) {
            dropQueuedBody();
            respondError(HttpResponseStatus.SERVICE_UNAVAILABLE, "cluster " + c.name()
                    + " is at its max_connections limit", RequestOutcome.OVERLOADED, false);
            return;
        }
        // ---- end resilience
        ex.connectDeadline = ticker.nanoTime() + c.config().connectTimeout().toNanos();
        armTimer(ex.connectDeadline);
        pool.connect(target, c.config()).addListener((ChannelFuture f) -> {
            if (f.isSuccess()) {
                f.channel().closeFuture().addListener(x -> br.connections().release());
            } else {
                br.connections().release();
            }
            onConnected(f, id, target, c);
        });
    }

    private void onConnected(ChannelFuture f, int id, Host target, ClusterBalancer c) {
        if (id != ex.exchangeId || state != State.CONNECTING) {
            if (f.isSuccess()) {
                pool.release(target, f.channel(), c.config()); // the exchange died meanwhile; keep the connection
            }
            return;
        }
        ex.connectDeadline = 0;
        releasePendingSlot();
        if (!f.isSuccess()) {
            boolean timeout = f.cause() instanceof ConnectTimeoutException;
            c.onOutcome(target, Outcome.CONNECT_FAILURE);
            if (retryAttempt(RetryPolicy.Failure.CONNECT_FAILURE, 0, null)) {
                return;
            }
            dropQueuedBody();
            String tls = UpstreamTlsException.describe(f.cause()); // upstream TLS: the handshake's failure reason
            respondError(timeout ? HttpResponseStatus.GATEWAY_TIMEOUT : HttpResponseStatus.BAD_GATEWAY,
                    tls != null ? tls : (timeout ? "timed out connecting to " : "cannot connect to ") + target.address()
                            + " of cluster " + c.name(),
                    timeout ? RequestOutcome.CONNECT_TIMEOUT : RequestOutcome.CONNECT_FAILURE, false);
            return;
        }
        ex.reusedConnection = false;
        attach(f.channel());
        state = State.PROXYING;
        ByteBuf head = ex.retryHead;
        ex.retryHead = null;
        writeHead(head);
        if (retry.hasReplay()) { // ---- resilience: a retry replays the body sent so far
            retry.replay(b -> upstream.write(b, upstream.voidPromise()));
        }
        Object m;
        while (state == State.PROXYING && (m = queue.peek()) instanceof HttpBody) {
            queue.poll();
            onRequestBody((HttpBody) m);
        }
        if (upstream != null) {
            upstream.flush();
            wroteUpstream = false;
        }
        updateRead();
    }

    // ---------------------------------------------------------------- upstream events

    @Override
    public void onUpstreamRead(Object msg) {
        if (msg instanceof HttpHead resp) {
            if (resp.status() == 101 && ex.upgrade != null && !ex.responseStarted) {
                startTunnel(resp); // traffic: the upgrade was accepted
                return;
            }
            if (resp.status() < 200) {
                if (resp.status() == 101 || announcesBody(resp)) {
                    // after a 101 the upstream speaks another protocol; a 1xx has no body
                    upstreamHandler.markDirty(ClusterMetrics.RETIRED_BODY_NOT_ALLOWED);
                }
                resp.release(); // 1xx: the client already had our own 100 Continue
                return;
            }
            if (ex.responseStarted) {
                resp.release(); // a second response to one request: the upstream connection is broken
                abortUpstream(Outcome.RESET);
                failMidResponse();
                return;
            }
            if (retry.active() && retryAttempt(RetryPolicy.Failure.STATUS, resp.status(), // ---- resilience
                    resp.status() >= 500 ? Outcome.SERVER_ERROR : Outcome.SUCCESS)) {
                resp.release();
                return;
            }
            onResponseHead(resp);
            if (resp.isComplete()) {
                onResponseComplete();
            }
        } else if (msg instanceof HttpBody b) {
            if (!ex.responseStarted) {
                b.release();
                return;
            }
            ex.bytesOut += b.payloadBytes();
            boolean last = b.isLast();
            if (ex.chunkResponse) {
                ChunkWriter.write(ctx, b);
            } else {
                ctx.write(b.content(), ctx.voidPromise());
            }
            if (last) {
                onResponseComplete();
            }
        } else if (msg instanceof HttpDecodeError err) {
            abortUpstream(Outcome.RESET);
            if (ex.responseStarted) {
                failMidResponse();
            } else if (!retryAttempt(RetryPolicy.Failure.RESET, 0, null)) {
                failUpstream("malformed response from upstream " + ex.host.address() + ": " + err.reason());
            }
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    /** The upstream accepted the upgrade: relay its 101 and turn both connections into a tunnel ({@link UpgradeTunnel}). */
    private void startTunnel(HttpHead resp) {
        ex.responseStarted = true;
        ex.status = 101;
        ex.responseDeadline = 0;
        state = State.TUNNEL;
        cancelTimer();
        releaseQueue();
        ex.cluster.onOutcome(ex.host, Outcome.SUCCESS);
        Channel up = upstream;
        upstream = null;
        upstreamHandler.owner(null);
        upstreamHandler = null; // never back to the pool: the connection now speaks another protocol
        UpgradeTunnel.start(ctx, UpgradeTunnel.switchingHead(ctx.alloc(), resp), up, scheduler, ex.route.tunnelIdleNanos(),
                lc.metrics(), this);
    }

    @Override
    public void tunnelClosed(long bytesToClient, long bytesToUpstream) {
        state = State.CLOSED;
        ex.bytesOut = bytesToClient;
        finishExchange(RequestOutcome.PROXIED, 101);
    }

    /**
     * A head the decoder framed as complete (no body: HEAD, 1xx, 204, 304) that announces a body
     * anyway. Its connection must not be reused: those bytes may still arrive and would be read as
     * the next exchange's response. Field reads; the header scan only for such (rare) heads.
     */
    private static boolean announcesBody(HttpHead resp) {
        return resp.contentLength() > 0 || resp.isChunked() || resp.indexOf(HttpHead.TRANSFER_ENCODING) >= 0;
    }

    private void onResponseHead(HttpHead resp) {
        if (resp.isComplete() && announcesBody(resp)) {
            upstreamHandler.markDirty(ClusterMetrics.RETIRED_BODY_NOT_ALLOWED);
        }
        ex.responseStarted = true;
        ex.responseDeadline = 0;
        ex.status = resp.status();
        ex.upstreamKeepAlive = resp.isKeepAlive();
        boolean addChunked = false;
        boolean dropFraming = false;
        if (resp.isCloseDelimited()) {
            // Close-delimited upstream body: chunk it for 1.1 clients, close after it for 1.0.
            ex.upstreamKeepAlive = false;
            if (ex.http10) {
                closeAfterResponse = true;
            } else {
                addChunked = true;
                ex.chunkResponse = true;
            }
        } else if (resp.isChunked() && ex.http10) {
            dropFraming = true;
            upstreamHandler.dechunk(true);
            closeAfterResponse = true;
        }
        boolean keep = ex.keepAlive && !closeAfterResponse && !lc.draining() && (ex.requestComplete || !ex.requestHasBody);
        closeAfterResponse = !keep;
        int connection = !keep ? ProxyHeads.CONNECTION_CLOSE_HEADER
                : ex.http10 ? ProxyHeads.CONNECTION_KEEP_ALIVE_HEADER : ProxyHeads.CONNECTION_AS_IS;
        ByteBuf head = ProxyHeads.responseHead(ctx.alloc(), resp, addChunked, dropFraming, connection);
        if (head != resp.raw()) {
            resp.release();
        }
        if (ex.route.responseRules(ex.cluster) != null || ex.options.tracing() != null) { // traffic: echoed id, header rules
            head = trafficHeaders.response(ctx.alloc(), head, ex.options.tracing(), ex.route.responseRules(ex.cluster), peer.ip(),
                    ex.route.name(), ex.host.address());
        }
        ctx.write(head, ctx.voidPromise());
    }

    private void onResponseComplete() {
        Channel up = detachUpstream();
        if (ex.upstreamKeepAlive && ex.requestComplete && up.isActive()) {
            up.config().setAutoRead(true);
            pool.release(ex.host, up, ex.cluster.config());
        } else {
            up.close();
        }
        ex.cluster.onOutcome(ex.host, ex.status >= 500 ? Outcome.SERVER_ERROR : Outcome.SUCCESS);
        finishExchange(RequestOutcome.PROXIED, ex.status);
        if (closeAfterResponse || !ex.requestComplete) {
            closeAfterFlush();
        } else {
            ctx.flush(); // the upstream is detached: its read-complete will not flush for us
            nextRequest();
        }
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
        updateRead();
    }

    @Override
    public void onUpstreamError(Throwable cause) {
        // the close that follows reports the loss through onUpstreamInactive
        upstreamTlsAlert = UpstreamTlsException.alert(cause); // upstream TLS: e.g. a TLS 1.3 client certificate rejected after the handshake
    }

    /** Upstream TLS: what a TLS error on the current upstream connection said, for the 502; null: none. */
    private String upstreamTlsAlert;

    /** The upstream connection of the current exchange closed before the response completed. */
    @Override
    public void onUpstreamInactive(Channel ch) {
        if (ch != upstream) {
            return;
        }
        upstream = null;
        upstreamHandler = null;
        if (ex.responseStarted) {
            ex.cluster.onOutcome(ex.host, Outcome.RESET);
            failMidResponse();
            return;
        }
        if (ex.reusedConnection && !ex.retried && ex.retryHead != null) {
            // A parked connection the upstream had already closed: try once more on a fresh one.
            ex.retried = true;
            connect();
            return;
        }
        ex.cluster.onOutcome(ex.host, Outcome.RESET);
        if (retryAttempt(RetryPolicy.Failure.RESET, 0, null)) {
            return;
        }
        failUpstream("upstream " + ex.host.address() + " closed the connection before responding"
                + (upstreamTlsAlert != null ? " (TLS: " + upstreamTlsAlert + ")" : ""));
    }

    /** The upstream failed after the response head went out: the client cannot be told, only cut off. */
    private void failMidResponse() {
        finishExchange(RequestOutcome.UPSTREAM_RESET, ex.status);
        state = State.CLOSED;
        releaseQueue();
        ctx.close(); // a truncated response must not look complete
    }

    private void failUpstream(String reason) {
        respondError(HttpResponseStatus.BAD_GATEWAY, reason, RequestOutcome.UPSTREAM_RESET, false);
    }

    /**
     * No byte of an incomplete request body for {@code request_body_timeout} while the gateway was
     * reading: 408 if nothing was answered yet, else just the close (the response cannot be
     * finished). The upstream connection is closed: its request is cut off mid-body.
     */
    private void onBodyTimeout(HttpOptions o, boolean tooSlow) {
        if (state == State.DISCARDING) { // the answer went out already; only the rest of the body was awaited
            state = State.CLOSED;
            releaseQueue();
            ctx.close();
            return;
        }
        abortUpstream(null); // the upstream is not at fault
        dropQueuedBody();
        if (ex.responseStarted) {
            finishExchange(RequestOutcome.BODY_TIMEOUT, ex.status);
            state = State.CLOSED;
            releaseQueue();
            ctx.close();
            return;
        }
        ex.keepAlive = false;
        respondError(HttpResponseStatus.REQUEST_TIMEOUT, tooSlow
                ? "request body: " + ex.requestBodyBytes + " bytes in " + (ticker.nanoTime() - ex.bodyRateStart) / 1_000_000
                        + " ms, below the minimum rate of " + o.minRequestBodyRate() + " bytes/s"
                : "request body: no bytes received for " + o.requestBodyTimeout().toMillis() + " ms",
                RequestOutcome.BODY_TIMEOUT, true);
    }

    /**
     * The client connection stayed unwritable for {@code write_timeout}: the client stopped reading.
     * Both sides close; what is queued for the client is dropped.
     */
    private void onWriteTimeout() {
        lc.metrics().writeTimedOut();
        State was = state;
        state = State.CLOSED;
        if (was == State.CONNECTING || was == State.PROXYING) {
            abortUpstream(null);
            finishExchange(RequestOutcome.WRITE_TIMEOUT, ex.responseStarted ? ex.status : 0);
        }
        releaseQueue();
        ctx.close();
    }

    /** The connection to the picked host did not come up within the cluster's connect timeout. */
    private void onConnectTimeout() {
        ex.connectDeadline = 0;
        ClusterBalancer c = ex.cluster;
        c.onOutcome(ex.host, Outcome.CONNECT_FAILURE);
        releasePendingSlot();
        if (retryAttempt(RetryPolicy.Failure.CONNECT_FAILURE, 0, null)) {
            return; // the connect goes on; onConnected parks the connection if it comes up
        }
        dropQueuedBody();
        respondError(HttpResponseStatus.GATEWAY_TIMEOUT, "timed out connecting to " + ex.host.address() + " of cluster "
                + c.name() + " within " + c.config().connectTimeout().toMillis() + " ms", RequestOutcome.CONNECT_TIMEOUT, false);
        // the connect goes on; onConnected parks the connection if it comes up
    }

    private void onResponseTimeout() {
        abortUpstream(Outcome.TIMEOUT);
        if (ex.overallDeadline != 0 && ticker.nanoTime() - ex.overallDeadline < 0 // a per-try timeout
                && retryAttempt(RetryPolicy.Failure.TIMEOUT, 0, null)) {
            return;
        }
        respondError(HttpResponseStatus.GATEWAY_TIMEOUT, "upstream " + ex.host.address() + " did not respond within "
                + TimeUnit.NANOSECONDS.toMillis(ex.route.timeoutNanos()) + " ms", RequestOutcome.UPSTREAM_TIMEOUT, false);
    }

    // ---------------------------------------------------------------- exchange plumbing

    private void attach(Channel ch) {
        upstreamTlsAlert = null;
        upstream = ch;
        upstreamHandler = UpstreamHandler.of(ch);
        upstreamHandler.owner(this);
        ch.config().setAutoRead(ctx.channel().isWritable());
    }

    private Channel detachUpstream() {
        Channel up = upstream;
        upstream = null;
        upstreamHandler.owner(null);
        upstreamHandler.dechunk(false);
        upstreamHandler = null;
        return up;
    }

    /** Drops the upstream side of a failing exchange (closing its connection), reporting {@code outcome}. */
    private void abortUpstream(Outcome outcome) {
        if (upstream != null) {
            detachUpstream().close();
        }
        if (outcome != null && ex.host != null) {
            ex.cluster.onOutcome(ex.host, outcome);
        }
    }

    /**
     * Answers the current request with the gateway's own error. The connection stays open only if
     * the client wants keep-alive, {@code forceClose} is false and no request body is left unread.
     */
    private void respondError(HttpResponseStatus st, String reason, RequestOutcome outcome, boolean forceClose) {
        respondError(st, reason, outcome, forceClose, null);
    }

    /** @param extraHeaders header lines (each ending in CRLF) added to the response, or null */
    private void respondError(HttpResponseStatus st, String reason, RequestOutcome outcome, boolean forceClose,
                              String extraHeaders) {
        boolean keep = ex.keepAlive && !forceClose && !closeAfterResponse && !lc.draining()
                && (ex.requestComplete || !ex.requestHasBody);
        finishExchange(outcome, st.code()); // metrics first: a client that saw the answer sees it counted
        ctx.writeAndFlush(outcome == RequestOutcome.OVERLOADED ? ErrorResponses.overloaded(ctx.alloc(), reason, keep)
                : ErrorResponses.of(ctx.alloc(), st, reason, keep, extraHeaders), ctx.voidPromise());
        if (!keep) {
            // Linger: the client may have sent more than was read; closing now could reset the answer away.
            state = State.CLOSED;
            releaseQueue();
            LingeringCloseHandler.closeAfterFlush(ctx.channel(), scheduler);
        } else if (ex.requestComplete) {
            nextRequest();
        } else {
            state = State.DISCARDING; // the (empty) rest of the request is still to come
            updateRead();
        }
    }

    /** The route's redirect or direct response ({@link LocalAnswers}); connection handling as for {@link #respondError}. */
    private void respondLocal(HttpHead req) {
        boolean keep = ex.keepAlive && !closeAfterResponse && !lc.draining() && (ex.requestComplete || !ex.requestHasBody);
        ByteBuf answer = LocalAnswers.response(ctx.alloc(), ex.route, req, "HEAD".equals(ex.method), keep,
                tlsRequests() != null);
        finishExchange(RequestOutcome.LOCAL, LocalAnswers.status(ex.route));
        ctx.writeAndFlush(answer, ctx.voidPromise());
        if (!keep) {
            state = State.CLOSED;
            releaseQueue();
            LingeringCloseHandler.closeAfterFlush(ctx.channel(), scheduler);
        } else if (ex.requestComplete) {
            nextRequest();
        } else {
            state = State.DISCARDING;
            updateRead();
        }
    }

    private void finishExchange(RequestOutcome outcome, int code) {
        RequestEnd e = end.reset();
        e.route = ex.route;
        e.outcome = outcome;
        e.status = code;
        e.durationNanos = ticker.nanoTime() - ex.start;
        e.host = ex.host;
        e.bytesOut = ex.bytesOut;
        // ---- resilience: attempts, the retry state, the breaker slots
        e.attempts = retry.attempt();
        retry.end(outcome == RequestOutcome.PROXIED && code < 500);
        releasePendingSlot();
        if (ex.requestSlot) {
            ex.requestSlot = false;
            ex.policies.breaker().requestDone();
        }
        if (lc.accessLog() != null) {
            e.traceId = trafficHeaders.logId();
            e.client = peer.ip();
            e.clientCert = tlsRequests == null ? null : tlsRequests.identity(); // TLS hook
            e.target = ex.request == null ? "-" : ex.method + " " + ex.request.target();
        }
        releaseRequest();
        trafficHeaders.reset();
        if (ex.mirror != null) {
            Mirror.exchangeEnded(ex.mirror);
            ex.mirror = null;
        }
        ex.bytesOut = 0;
        if (ex.host != null) {
            ex.host.requestFinished();
            ex.host = null;
        }
        lc.requestEnded(e); // metrics, access log
        ex.responseDeadline = 0;
        ex.connectDeadline = 0;
        ex.upgrade = null;
        ex.route = null;
        ex.cluster = null;
    }

    // ---------------------------------------------------------------- resilience (policy package)

    private void releasePendingSlot() {
        if (ex.pendingSlot) {
            ex.pendingSlot = false;
            ex.policies.breaker().pending().release();
        }
    }

    /**
     * The current attempt failed ({@code f}, with the response status for {@link RetryPolicy.Failure#STATUS}):
     * if the route's policy retries it, attempts are left, the back-off ends before the route's
     * deadline and the retry budget allows it, leaves the attempt (its connection closed, {@code report}
     * given to outlier detection when not null) and schedules the next one after the back-off on
     * this connection's scheduler. Request body parts that arrive meanwhile queue (reads pause).
     * False: answer the failure as before.
     */
    private boolean retryAttempt(RetryPolicy.Failure f, int status, Outcome report) {
        RetryPolicy p = retry.policy();
        if (p == null || !retry.active() || ex.responseStarted || state == State.CLOSED
                || !p.retriesHttp(f, status, p.replaySafe(ex.method))) {
            return false;
        }
        long delay = p.backoffNanos(retry.attempt(), lc.retryJitter());
        if (ex.overallDeadline != 0 && ticker.nanoTime() + delay - ex.overallDeadline >= 0) {
            return false; // the route's timeout would pass first
        }
        if (!retry.tryRetry()) {
            return false;
        }
        if (upstream != null) {
            detachUpstream().close();
        }
        if (report != null) {
            ex.cluster.onOutcome(ex.host, report);
        }
        releasePendingSlot();
        ex.host.requestFinished();
        ex.host = null;
        ex.exchangeId++; // callbacks of the failed attempt are stale now
        ex.connectDeadline = 0;
        ex.responseDeadline = 0;
        state = State.CONNECTING; // body parts queue until the next attempt is connected
        updateRead();
        int id = ex.exchangeId;
        retry.backoff = scheduler.schedule(() -> nextAttempt(id), delay);
        return true;
    }

    /** The back-off of a retry is over: a host other than those tried, the head again, connect. */
    private void nextAttempt(int id) {
        if (id != ex.exchangeId || state != State.CONNECTING || ex.host != null) {
            return;
        }
        retry.backoff = null;
        Host h = retry.pick(ex.cluster);
        if (h == null) {
            dropQueuedBody();
            respondError(HttpResponseStatus.SERVICE_UNAVAILABLE, "no host of cluster " + ex.cluster.name()
                    + " left to retry on", retry.pickOverflowed() ? RequestOutcome.OVERLOADED : RequestOutcome.NO_HEALTHY_HOST, false);
            return;
        }
        ex.host = h;
        h.requestStarted();
        if (ex.retryHead != null) {
            ex.retryHead.release();
        }
        ex.retryHead = requestHead(h);
        ex.reusedConnection = false;
        connect();
    }

    private void releaseRequest() {
        if (ex.request != null) {
            ex.request.release();
            ex.request = null;
        }
        if (ex.retryHead != null) {
            ex.retryHead.release();
            ex.retryHead = null;
        }
    }

    private void nextRequest() {
        state = State.AWAIT_HEAD;
        headStart = 0;
        lastActivity = ticker.nanoTime();
        armTimer(lastActivity + lc.options().idleTimeout().toNanos());
        if (closeAfterResponse) {
            closeAfterFlush();
            return;
        }
        Object m;
        while (state == State.AWAIT_HEAD && (m = queue.poll()) != null) {
            dispatch(m);
        }
        while (state == State.DISCARDING && (m = queue.peek()) instanceof HttpBody) {
            dispatch(queue.poll());
        }
        if (wroteUpstream && upstream != null) {
            wroteUpstream = false;
            upstream.flush(); // a pipelined request dispatched outside a downstream read
        }
        updateRead();
    }

    private void closeAfterFlush() {
        state = State.CLOSED;
        releaseQueue();
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    }

    /** Reads from the client only when there is somewhere to put what arrives. */
    private void updateRead() {
        boolean want = state != State.CLOSED && state != State.CONNECTING && queue.isEmpty()
                && (upstream == null || upstream.isWritable()) && ex.upgrade == null;
        if (ctx.channel().config().isAutoRead() != want) {
            ctx.channel().config().setAutoRead(want);
            long now = ticker.nanoTime();
            if (want) {
                lastActivity = now; // the body-read timeout counts only while the gateway reads
                if (ex.readsHeldSince != 0) {
                    ex.bodyRateStart += now - ex.readsHeldSince; // and so does the minimum rate
                    ex.readsHeldSince = 0;
                }
            } else if (ex.bodyRateStart != 0) {
                ex.readsHeldSince = now;
            }
        }
    }

    /** Releases the queued parts of the current request body (not a pipelined next request). */
    private void dropQueuedBody() {
        Object m;
        while ((m = queue.peek()) instanceof HttpBody b) {
            queue.poll();
            if (b.isLast()) {
                ex.requestComplete = true;
            }
            b.release();
        }
    }

    private void releaseQueue() {
        Object m;
        while ((m = queue.poll()) != null) {
            ReferenceCountUtil.release(m);
        }
    }

    private static boolean idempotent(String m) {
        return switch (m) {
            case "GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE" -> true;
            default -> false;
        };
    }

    // ---------------------------------------------------------------- the one timer
    //
    // One task at a time is scheduled per connection (a ConnectionTimer). A deadline set while it is armed
    // for an earlier time changes nothing: when it fires, onTimer re-arms for the earliest deadline
    // then pending. A deadline earlier than the armed one (rare: every deadline is at least the horizon
    // away, and the task is never armed further out than the horizon) cancels and re-arms. So every
    // timeout fires exactly at its deadline on the scheduler's clock (tests: HttpProxyTimeoutTest),
    // and a request costs no scheduling at all in the common case.

    private void armTimer(long deadline) {
        if (timer.isArmed() && deadline - timer.due() >= 0) {
            return; // the armed timer fires earlier and re-arms for what is left
        }
        // Never arm further out than the shortest timeout: any deadline set before this timer fires
        // is then later than it, so per-request deadlines never cancel and reschedule.
        HttpOptions o = lc.options();
        long horizon = Math.min(Math.min(Math.min(o.idleTimeout().toNanos(), o.requestHeaderTimeout().toNanos()),
                Math.min(o.requestBodyTimeout().toNanos(), o.writeTimeout().toNanos())), lc.routes().minTimeoutNanos());
        timer.arm(deadline, horizon);
    }

    private void cancelTimer() {
        timer.cancel();
    }

    /**
     * When the body received so far falls below {@code min_request_body_rate}: after the grace of
     * {@code request_body_timeout} from the head, every {@code rate} bytes buy one more second.
     */
    private long bodyRateDue(HttpOptions o) {
        long rate = o.minRequestBodyRate();
        long bytes = ex.requestBodyBytes;
        long earned = bytes / rate * 1_000_000_000L + bytes % rate * 1_000_000_000L / rate;
        return ex.bodyRateStart + o.requestBodyTimeout().toNanos() + earned;
    }

    private static long earlier(long a, long b) {
        return a - b <= 0 ? a : b;
    }

    private void onTimer() {
        if (state == State.CLOSED || state == State.TUNNEL) {
            return;
        }
        long now = ticker.nanoTime();
        HttpOptions o = lc.options();
        long next = now + o.idleTimeout().toNanos(); // nothing else due: look again later
        if (unwritable) {
            long due = unwritableSince + o.writeTimeout().toNanos();
            if (now - due >= 0) {
                onWriteTimeout();
                return;
            }
            next = earlier(next, due);
        }
        if ((state == State.PROXYING && ex.requestHasBody && !ex.requestComplete || state == State.DISCARDING)
                && ctx.channel().config().isAutoRead()) {
            long due = lastActivity + o.requestBodyTimeout().toNanos();
            if (now - due >= 0) {
                onBodyTimeout(o, false);
                return;
            }
            next = earlier(next, due);
            if (state == State.PROXYING && ex.bodyRateStart != 0) {
                long rateDue = bodyRateDue(o);
                if (now - rateDue >= 0) {
                    onBodyTimeout(o, true);
                    return;
                }
                next = earlier(next, rateDue);
            }
        }
        if (state == State.CONNECTING && ex.connectDeadline != 0) {
            if (now - ex.connectDeadline >= 0) {
                onConnectTimeout();
                return;
            }
            next = earlier(next, ex.connectDeadline);
        } else if (state == State.PROXYING && ex.responseDeadline != 0) {
            if (now - ex.responseDeadline >= 0) {
                onResponseTimeout();
                return;
            }
            next = earlier(next, ex.responseDeadline);
        } else if (state == State.AWAIT_HEAD && headStart != 0) {
            long due = headStart + o.requestHeaderTimeout().toNanos();
            if (now - due >= 0) {
                lc.metrics().requestStarted();
                ex.start = now;
                ex.options = o;
                ex.keepAlive = false;
                respondError(HttpResponseStatus.REQUEST_TIMEOUT, "request head not received within "
                        + o.requestHeaderTimeout().toMillis() + " ms", RequestOutcome.HEADER_TIMEOUT, true);
                return;
            }
            next = earlier(next, due);
        } else if (state == State.AWAIT_HEAD) {
            long due = lastActivity + o.idleTimeout().toNanos();
            if (drainDeadline != 0) {
                due = earlier(due, drainDeadline);
            }
            if (now - due >= 0) {
                ctx.close();
                return;
            }
            next = earlier(next, due);
        }
        armTimer(next);
    }
}
