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
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.codec.http.HttpBody;
import io.sluice.codec.http.HttpDecodeError;
import io.sluice.codec.http.HttpHead;
import io.sluice.codec.http.ProxyHeads;
import io.sluice.core.cluster.Host;
import io.sluice.core.cluster.Outcome;
import io.sluice.core.config.HttpOptions;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.accesslog.AccessLog;
import io.sluice.server.metrics.RequestOutcome;
import io.sluice.server.route.Route;
import io.sluice.server.route.RouteTable;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * The downstream end of an HTTP/1.1 proxied connection, after {@link io.sluice.codec.http.Http1Decoder}.
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
 * <p>Timeouts share one lazily re-armed timer per connection: idle keep-alive, request-head read
 * (slowloris), and upstream response (time from request sent to response head).
 */
final class HttpProxyHandler extends ChannelInboundHandlerAdapter {

    private enum State { AWAIT_HEAD, CONNECTING, PROXYING, DISCARDING, CLOSED }

    private static final ByteBuf LAST_CHUNK = Unpooled.unreleasableBuffer(Unpooled.directBuffer(5)
            .writeBytes("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
    private static final ByteBuf CRLF = Unpooled.unreleasableBuffer(Unpooled.directBuffer(2)
            .writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII)));

    private final HttpListenerContext lc;
    private ChannelHandlerContext ctx;
    private HttpUpstreamPool pool;
    private State state = State.AWAIT_HEAD;
    /** Messages held back: request parts while connecting, or a pipelined next request. */
    private final ArrayDeque<Object> queue = new ArrayDeque<>(4);
    private String clientIp;
    /** The peer's address bytes, once {@link #trustedPeer()} needed them. */
    private byte[] peerAddress;

    // timers (nanos from the listener's ticker; 0 = not set)
    private ScheduledFuture<?> timer;
    private long timerDue;
    private long lastActivity;
    private long headStart;
    private long responseDeadline;

    // the current exchange
    private int exchangeId;
    /** The request head, held (for the access log) until the exchange ends. */
    private HttpHead request;
    private String method;
    /** The head as sent upstream, kept only while a retry on a fresh connection is possible. */
    private ByteBuf retryHead;
    private HttpOptions options;
    private boolean keepAlive;
    private boolean http10;
    private boolean requestHasBody;
    private boolean requestComplete;
    private long requestBodyBytes;
    private Route route;
    private ClusterBalancer cluster;
    private Host host;
    private Channel upstream;
    private UpstreamHandler upstreamHandler;
    private boolean reusedConnection;
    private boolean retried;
    private boolean responseStarted;
    /** The response body is close-delimited and chunked by us for the client. */
    private boolean chunkResponse;
    private boolean upstreamKeepAlive;
    private boolean closeAfterResponse;
    private boolean wroteUpstream;
    private int status;
    private long start;
    private long bytesOut;

    HttpProxyHandler(HttpListenerContext lc) {
        this.lc = lc;
    }

    // ---------------------------------------------------------------- downstream events

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.pool = lc.pool(ctx.executor());
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        lc.metrics().connectionOpened();
        lastActivity = lc.ticker().nanoTime();
        armTimer(lastActivity + lc.options().idleTimeout().toNanos());
        ctx.fireChannelActive();
    }

    /** Raw bytes arrived (called by {@link ReadMarkerHandler} before decoding). */
    void onBytes() {
        long now = lc.ticker().nanoTime();
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
        if (msg instanceof HttpDecodeError err && !requestComplete
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
        if (upstream != null) {
            upstream.config().setAutoRead(ctx.channel().isWritable());
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
            finishExchange(RequestOutcome.CLIENT_CLOSED, responseStarted ? status : 0);
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
            if ((state == State.AWAIT_HEAD && headStart == 0 || state == State.DISCARDING) && queue.isEmpty()) {
                ctx.close();
            } else {
                closeAfterResponse = true;
            }
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    // ---------------------------------------------------------------- request

    private void beginExchange() {
        exchangeId++;
        start = lc.ticker().nanoTime();
        headStart = 0;
        lc.metrics().requestStarted();
        options = lc.options();
        requestBodyBytes = 0;
        responseStarted = false;
        chunkResponse = false;
        retried = false;
        status = 0;
    }

    private void onDecodeError(HttpDecodeError err) {
        beginExchange();
        keepAlive = false;
        requestHasBody = false;
        requestComplete = true;
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
        if (responseStarted) {
            finishExchange(RequestOutcome.BAD_REQUEST, status);
            state = State.CLOSED;
            releaseQueue();
            ctx.close();
            return;
        }
        requestComplete = true;
        if (err.status() == 431) {
            respondError(HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, err.reason(), RequestOutcome.HEADERS_TOO_LARGE, true);
        } else {
            respondError(HttpResponseStatus.BAD_REQUEST, "malformed request body: " + err.reason(),
                    RequestOutcome.BAD_REQUEST, true);
        }
    }

    private void onRequestHead(HttpHead req) {
        beginExchange();
        request = req;
        method = req.method();
        http10 = req.isHttp10();
        keepAlive = req.isKeepAlive() && !lc.draining() && !closeAfterResponse;
        requestHasBody = req.hasBody();
        requestComplete = req.isComplete();

        // Route on what the upstream will see: the authority of an absolute-form target (RFC 9112
        // §3.2.2) or else Host, and the normalized path (the one that is forwarded).
        String authority = req.authority();
        if (req.indexOf(HttpHead.HOST) < 0 && !http10) {
            respondError(HttpResponseStatus.BAD_REQUEST, "missing Host header", RequestOutcome.BAD_REQUEST, true);
            return;
        }
        RouteTable table = lc.routes();
        String path = table.usesPath() ? req.path() : null;
        route = table.routeHttp(table.usesHost() ? ProxyHeads.hostWithoutPort(authority) : null, path, method,
                req::header);
        if (route == null) {
            respondError(HttpResponseStatus.NOT_FOUND, "no route for " + method + " " + req.path()
                    + (authority == null ? "" : " on host " + authority), RequestOutcome.NO_ROUTE, false);
            return;
        }
        long max = options.maxRequestBodyBytes();
        if (max > 0 && req.contentLength() > max) {
            respondError(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "request body of " + req.contentLength()
                    + " bytes exceeds the limit of " + max, RequestOutcome.BODY_TOO_LARGE, true);
            return;
        }
        cluster = route.cluster();
        host = cluster.pick();
        if (host == null) {
            respondError(HttpResponseStatus.SERVICE_UNAVAILABLE, "no healthy host in cluster " + cluster.name(),
                    RequestOutcome.NO_HEALTHY_HOST, false);
            return;
        }
        boolean expect = req.expectsContinue();
        if (expect) {
            // Like nginx: the gateway itself invites the body once it knows where it goes.
            ctx.writeAndFlush(ErrorResponses.continueResponse(), ctx.voidPromise());
        }
        String rewritten = null;
        if (route.rewrites()) {
            String forward = req.forwardTarget();
            rewritten = route.rewrite(forward != null ? forward : req.target());
        }
        String hostOverride = !options.preserveHost() || authority == null ? host.address() : null;
        boolean xf = options.xForwarded();
        ByteBuf head = ProxyHeads.requestHead(ctx.alloc(), req, rewritten, hostOverride, xf ? clientIp() : null,
                xf && trustedPeer(), expect);
        if (lc.accessLog() == null) {
            request = null; // nothing needs the received head any more
            req.release();
        }
        host.requestStarted();

        Channel pooled = pool.acquire(host);
        if (pooled != null) {
            reusedConnection = true;
            if (!requestHasBody && idempotent(method)) {
                retryHead = head.retainedDuplicate(); // a stale parked connection may need it again
            }
            attach(pooled);
            state = State.PROXYING;
            writeHead(head);
        } else {
            retryHead = head;
            connect();
        }
    }

    private void onRequestBody(HttpBody b) {
        switch (state) {
            case DISCARDING -> {
                boolean last = b.isLast();
                b.release();
                if (last) {
                    requestComplete = true;
                    nextRequest();
                }
            }
            case CONNECTING, PROXYING -> {
                if (state == State.CONNECTING) {
                    queue.add(b); // counted and forwarded once connected
                    return;
                }
                long max = options.maxRequestBodyBytes();
                requestBodyBytes += b.payloadBytes();
                if (max > 0 && requestBodyBytes > max) {
                    b.release();
                    abortUpstream(null);
                    respondError(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "request body exceeds the limit of "
                            + max + " bytes", RequestOutcome.BODY_TOO_LARGE, true);
                    return;
                }
                boolean last = b.isLast();
                if (last) {
                    requestComplete = true;
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
        upstreamHandler.expectBodylessResponse("HEAD".equals(method));
        upstream.write(head, upstream.voidPromise());
        wroteUpstream = true;
        if (requestComplete) {
            armResponseDeadline();
        }
    }

    private void armResponseDeadline() {
        responseDeadline = lc.ticker().nanoTime() + route.timeoutNanos();
        armTimer(responseDeadline);
    }

    private void connect() {
        state = State.CONNECTING;
        updateRead();
        int id = exchangeId;
        Host target = host;
        ClusterBalancer c = cluster;
        pool.connect(target, c.config()).addListener((ChannelFuture f) -> onConnected(f, id, target, c));
    }

    private void onConnected(ChannelFuture f, int id, Host target, ClusterBalancer c) {
        if (id != exchangeId || state != State.CONNECTING) {
            if (f.isSuccess()) {
                pool.release(target, f.channel(), c.config()); // the exchange died meanwhile; keep the connection
            }
            return;
        }
        if (!f.isSuccess()) {
            boolean timeout = f.cause() instanceof ConnectTimeoutException;
            c.onOutcome(target, Outcome.CONNECT_FAILURE);
            dropQueuedBody();
            respondError(timeout ? HttpResponseStatus.GATEWAY_TIMEOUT : HttpResponseStatus.BAD_GATEWAY,
                    (timeout ? "timed out connecting to " : "cannot connect to ") + target.address()
                            + " of cluster " + c.name(),
                    timeout ? RequestOutcome.CONNECT_TIMEOUT : RequestOutcome.CONNECT_FAILURE, false);
            return;
        }
        reusedConnection = false;
        attach(f.channel());
        state = State.PROXYING;
        ByteBuf head = retryHead;
        retryHead = null;
        writeHead(head);
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

    void onUpstreamRead(Object msg) {
        if (msg instanceof HttpHead resp) {
            if (resp.status() < 200) {
                resp.release(); // 1xx: the client already had our own 100 Continue
                return;
            }
            if (responseStarted) {
                resp.release(); // a second response to one request: the upstream connection is broken
                abortUpstream(Outcome.RESET);
                failMidResponse();
                return;
            }
            onResponseHead(resp);
            if (resp.isComplete()) {
                onResponseComplete();
            }
        } else if (msg instanceof HttpBody b) {
            if (!responseStarted) {
                b.release();
                return;
            }
            bytesOut += b.payloadBytes();
            boolean last = b.isLast();
            if (chunkResponse) {
                int n = b.content().readableBytes();
                if (n > 0) {
                    ctx.write(Unpooled.wrappedBuffer((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII)),
                            ctx.voidPromise());
                    ctx.write(b.content(), ctx.voidPromise());
                    ctx.write(CRLF.duplicate(), ctx.voidPromise());
                } else {
                    b.release();
                }
                if (last) {
                    ctx.write(LAST_CHUNK.duplicate(), ctx.voidPromise());
                }
            } else {
                ctx.write(b.content(), ctx.voidPromise());
            }
            if (last) {
                onResponseComplete();
            }
        } else if (msg instanceof HttpDecodeError err) {
            abortUpstream(Outcome.RESET);
            if (responseStarted) {
                failMidResponse();
            } else {
                failUpstream("malformed response from upstream " + host.address() + ": " + err.reason());
            }
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    private void onResponseHead(HttpHead resp) {
        responseStarted = true;
        responseDeadline = 0;
        status = resp.status();
        upstreamKeepAlive = resp.isKeepAlive();
        boolean addChunked = false;
        boolean dropFraming = false;
        if (resp.isCloseDelimited()) {
            // Close-delimited upstream body: chunk it for 1.1 clients, close after it for 1.0.
            upstreamKeepAlive = false;
            if (http10) {
                closeAfterResponse = true;
            } else {
                addChunked = true;
                chunkResponse = true;
            }
        } else if (resp.isChunked() && http10) {
            dropFraming = true;
            upstreamHandler.dechunk(true);
            closeAfterResponse = true;
        }
        boolean keep = keepAlive && !closeAfterResponse && !lc.draining() && (requestComplete || !requestHasBody);
        closeAfterResponse = !keep;
        int connection = !keep ? ProxyHeads.CONNECTION_CLOSE_HEADER
                : http10 ? ProxyHeads.CONNECTION_KEEP_ALIVE_HEADER : ProxyHeads.CONNECTION_AS_IS;
        ByteBuf head = ProxyHeads.responseHead(ctx.alloc(), resp, addChunked, dropFraming, connection);
        if (head != resp.raw()) {
            resp.release();
        }
        ctx.write(head, ctx.voidPromise());
    }

    private void onResponseComplete() {
        Channel up = detachUpstream();
        if (upstreamKeepAlive && requestComplete && up.isActive()) {
            up.config().setAutoRead(true);
            pool.release(host, up, cluster.config());
        } else {
            up.close();
        }
        cluster.onOutcome(host, status >= 500 ? Outcome.SERVER_ERROR : Outcome.SUCCESS);
        finishExchange(RequestOutcome.PROXIED, status);
        if (closeAfterResponse || !requestComplete) {
            closeAfterFlush();
        } else {
            ctx.flush(); // the upstream is detached: its read-complete will not flush for us
            nextRequest();
        }
    }

    void onUpstreamReadComplete() {
        ctx.flush();
        Channel up = upstream;
        if (up != null && !ctx.channel().isWritable()) {
            up.config().setAutoRead(false);
        }
    }

    void onUpstreamWritabilityChanged() {
        updateRead();
    }

    void onUpstreamError(Throwable cause) {
        // the close that follows reports the loss through onUpstreamInactive
    }

    /** The upstream connection of the current exchange closed before the response completed. */
    void onUpstreamInactive(Channel ch) {
        if (ch != upstream) {
            return;
        }
        upstream = null;
        upstreamHandler = null;
        if (responseStarted) {
            cluster.onOutcome(host, Outcome.RESET);
            failMidResponse();
            return;
        }
        if (reusedConnection && !retried && retryHead != null) {
            // A parked connection the upstream had already closed: try once more on a fresh one.
            retried = true;
            connect();
            return;
        }
        cluster.onOutcome(host, Outcome.RESET);
        failUpstream("upstream " + host.address() + " closed the connection before responding");
    }

    /** The upstream failed after the response head went out: the client cannot be told, only cut off. */
    private void failMidResponse() {
        finishExchange(RequestOutcome.UPSTREAM_RESET, status);
        state = State.CLOSED;
        releaseQueue();
        ctx.close(); // a truncated response must not look complete
    }

    private void failUpstream(String reason) {
        respondError(HttpResponseStatus.BAD_GATEWAY, reason, RequestOutcome.UPSTREAM_RESET, false);
    }

    private void onResponseTimeout() {
        abortUpstream(Outcome.TIMEOUT);
        respondError(HttpResponseStatus.GATEWAY_TIMEOUT, "upstream " + host.address() + " did not respond within "
                + TimeUnit.NANOSECONDS.toMillis(route.timeoutNanos()) + " ms", RequestOutcome.UPSTREAM_TIMEOUT, false);
    }

    // ---------------------------------------------------------------- exchange plumbing

    private void attach(Channel ch) {
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
        if (outcome != null && host != null) {
            cluster.onOutcome(host, outcome);
        }
    }

    /**
     * Answers the current request with the gateway's own error. The connection stays open only if
     * the client wants keep-alive, {@code forceClose} is false and no request body is left unread.
     */
    private void respondError(HttpResponseStatus st, String reason, RequestOutcome outcome, boolean forceClose) {
        boolean keep = keepAlive && !forceClose && !closeAfterResponse && !lc.draining()
                && (requestComplete || !requestHasBody);
        finishExchange(outcome, st.code()); // metrics first: a client that saw the answer sees it counted
        ctx.writeAndFlush(ErrorResponses.of(ctx.alloc(), st, reason, keep), ctx.voidPromise());
        if (!keep) {
            closeAfterFlush();
        } else if (requestComplete) {
            nextRequest();
        } else {
            state = State.DISCARDING; // the (empty) rest of the request is still to come
            updateRead();
        }
    }

    private void finishExchange(RequestOutcome outcome, int code) {
        long elapsed = lc.ticker().nanoTime() - start;
        AccessLog accessLog = lc.accessLog();
        if (accessLog != null) {
            accessLog.log(new AccessLog.Entry(System.currentTimeMillis(), lc.name(), "http", clientIp(),
                    request == null ? "-" : method + " " + request.target(), code, outcome.tag(),
                    host == null ? null : host.address(), bytesOut, elapsed / 1000));
        }
        releaseRequest();
        bytesOut = 0;
        if (host != null) {
            host.requestFinished();
            host = null;
        }
        lc.metrics().requestFinished(route, outcome, code, elapsed);
        responseDeadline = 0;
        route = null;
        cluster = null;
    }

    private void releaseRequest() {
        if (request != null) {
            request.release();
            request = null;
        }
        if (retryHead != null) {
            retryHead.release();
            retryHead = null;
        }
    }

    private void nextRequest() {
        state = State.AWAIT_HEAD;
        headStart = 0;
        lastActivity = lc.ticker().nanoTime();
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
                && (upstream == null || upstream.isWritable());
        if (ctx.channel().config().isAutoRead() != want) {
            ctx.channel().config().setAutoRead(want);
        }
    }

    /** Releases the queued parts of the current request body (not a pipelined next request). */
    private void dropQueuedBody() {
        Object m;
        while ((m = queue.peek()) instanceof HttpBody b) {
            queue.poll();
            if (b.isLast()) {
                requestComplete = true;
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

    /** The client's address as text, worked out once per connection. */
    private String clientIp() {
        String ip = clientIp;
        if (ip == null) {
            ip = ctx.channel().remoteAddress() instanceof InetSocketAddress a ? a.getAddress().getHostAddress() : "unknown";
            clientIp = ip;
        }
        return ip;
    }

    /**
     * Whether this connection's peer is one of {@code http.trusted_proxies} (its X-Forwarded-* and
     * Forwarded headers are then kept and appended to). The peer's address bytes are read once per
     * connection; the list is the current one (a reload applies to the next request).
     */
    private boolean trustedPeer() {
        HttpOptions o = options;
        if (o.trustedProxies().isEmpty()) {
            return false;
        }
        byte[] peer = peerAddress;
        if (peer == null) {
            peer = ctx.channel().remoteAddress() instanceof InetSocketAddress a && a.getAddress() != null
                    ? a.getAddress().getAddress() : new byte[0];
            peerAddress = peer;
        }
        return o.trusts(peer);
    }

    private static boolean idempotent(String m) {
        return switch (m) {
            case "GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE" -> true;
            default -> false;
        };
    }

    // ---------------------------------------------------------------- the one timer

    private void armTimer(long deadline) {
        if (timer != null && deadline >= timerDue) {
            return; // the armed timer fires earlier and re-arms for what is left
        }
        if (timer != null) {
            timer.cancel(false); // rare: the invariant below makes later deadlines fall after the armed timer
        }
        long now = lc.ticker().nanoTime();
        // Never arm further out than the shortest timeout: any deadline set before this timer fires
        // is then later than it, so the per-request response deadline never cancels and reschedules.
        HttpOptions o = lc.options();
        long horizon = Math.min(Math.min(o.idleTimeout().toNanos(), o.requestHeaderTimeout().toNanos()),
                lc.routes().minTimeoutNanos());
        timerDue = Math.min(deadline, now + horizon);
        timer = ctx.executor().schedule(this::onTimer, Math.max(0, timerDue - now), TimeUnit.NANOSECONDS);
    }

    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    private void onTimer() {
        timer = null;
        if (state == State.CLOSED) {
            return;
        }
        long now = lc.ticker().nanoTime();
        HttpOptions o = lc.options();
        long next;
        if (state == State.PROXYING && responseDeadline != 0) {
            if (now - responseDeadline >= 0) {
                onResponseTimeout();
                return;
            }
            next = responseDeadline;
        } else if (state == State.AWAIT_HEAD && headStart != 0) {
            long due = headStart + o.requestHeaderTimeout().toNanos();
            if (now - due >= 0) {
                lc.metrics().requestStarted();
                start = now;
                options = o;
                keepAlive = false;
                respondError(HttpResponseStatus.REQUEST_TIMEOUT, "request head not received within "
                        + o.requestHeaderTimeout().toMillis() + " ms", RequestOutcome.HEADER_TIMEOUT, true);
                return;
            }
            next = due;
        } else if (state == State.AWAIT_HEAD) {
            long due = lastActivity + o.idleTimeout().toNanos();
            if (now - due >= 0) {
                ctx.close();
                return;
            }
            next = due;
        } else {
            next = now + o.idleTimeout().toNanos(); // busy: look again later
        }
        armTimer(next);
    }
}
