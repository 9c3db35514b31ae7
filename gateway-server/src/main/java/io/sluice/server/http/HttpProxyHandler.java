package io.sluice.server.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.core.cluster.Host;
import io.sluice.core.cluster.Outcome;
import io.sluice.core.config.HttpOptions;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.accesslog.AccessLog;
import io.sluice.server.metrics.RequestOutcome;
import io.sluice.server.route.Route;
import io.sluice.server.route.RouteTable;

import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * The downstream end of an HTTP/1.1 proxied connection, after {@code HttpServerCodec}. One
 * request at a time: route, pick a host, borrow a keep-alive upstream connection of this event
 * loop (or open one), and stream the request body up and the response down without aggregating
 * either. Backpressure: when one side's outbound buffer is full, reading from the other side
 * stops until it drains. Everything runs on this connection's event loop; the upstream connection
 * is on the same loop, so there are no locks.
 *
 * <p>Buffer ownership: every {@link HttpContent} read is either written to the other side (which
 * then owns it), queued (released if the exchange dies) or released here.
 *
 * <p>Timeouts share one lazily re-armed timer per connection: idle keep-alive, request-head read
 * (slowloris), and upstream response (time from request sent to response head).
 */
final class HttpProxyHandler extends ChannelInboundHandlerAdapter {

    private enum State { AWAIT_HEAD, CONNECTING, PROXYING, DISCARDING, CLOSED }

    private final HttpListenerContext lc;
    private ChannelHandlerContext ctx;
    private HttpUpstreamPool pool;
    private State state = State.AWAIT_HEAD;
    /** Messages held back: request parts while connecting, or a pipelined next request. */
    private final ArrayDeque<HttpObject> queue = new ArrayDeque<>(4);

    // timers (nanos from the listener's ticker; 0 = not set)
    private ScheduledFuture<?> timer;
    private long timerDue;
    private long lastActivity;
    private long headStart;
    private long responseDeadline;

    // the current exchange
    private int exchangeId;
    private HttpRequest request;
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
    private boolean reusedConnection;
    private boolean retried;
    private boolean responseStarted;
    private boolean skipInterim;
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
        if (!(msg instanceof HttpObject obj) || state == State.CLOSED) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (!queue.isEmpty() || (state != State.AWAIT_HEAD && obj instanceof HttpRequest)) {
            queue.add(obj); // pipelined, or waiting for the upstream connection
            updateRead();
            return;
        }
        dispatch(obj);
    }

    private void dispatch(HttpObject obj) {
        if (obj instanceof HttpRequest req) {
            onRequestHead(req);
            if (obj instanceof HttpContent c && state != State.CLOSED) {
                onRequestContent(c);
            } else if (obj instanceof HttpContent c) {
                c.release();
            }
        } else if (obj instanceof HttpContent c) {
            onRequestContent(c);
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
            finishExchange(RequestOutcome.CLIENT_CLOSED, responseStarted ? status : 0, null);
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

    private void onRequestHead(HttpRequest req) {
        exchangeId++;
        start = lc.ticker().nanoTime();
        headStart = 0;
        lc.metrics().requestStarted();
        request = req;
        options = lc.options();
        http10 = req.protocolVersion().equals(HttpVersion.HTTP_1_0);
        keepAlive = HttpUtil.isKeepAlive(req) && !lc.draining() && !closeAfterResponse;
        requestHasBody = HttpUtil.isTransferEncodingChunked(req) || HttpUtil.getContentLength(req, 0L) > 0;
        requestComplete = false;
        requestBodyBytes = 0;
        responseStarted = false;
        skipInterim = false;
        retried = false;
        status = 0;

        DecoderResult dr = req.decoderResult();
        if (dr.isFailure()) {
            Throwable cause = dr.cause();
            if (cause instanceof TooLongHttpHeaderException) {
                respondError(HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "request headers exceed "
                        + options.maxHeaderSize() + " bytes", RequestOutcome.HEADERS_TOO_LARGE, true);
            } else if (cause instanceof TooLongHttpLineException) {
                respondError(HttpResponseStatus.REQUEST_URI_TOO_LONG, "request line exceeds "
                        + options.maxInitialLineLength() + " bytes", RequestOutcome.URI_TOO_LONG, true);
            } else if (cause instanceof TooLongFrameException) {
                respondError(HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "request head too large",
                        RequestOutcome.HEADERS_TOO_LARGE, true);
            } else {
                respondError(HttpResponseStatus.BAD_REQUEST, "malformed request: " + cause.getMessage(),
                        RequestOutcome.BAD_REQUEST, true);
            }
            return;
        }
        HttpHeaders headers = req.headers();
        String hostHeader = headers.get(HttpHeaderNames.HOST);
        if (hostHeader == null && !http10) {
            respondError(HttpResponseStatus.BAD_REQUEST, "missing Host header", RequestOutcome.BAD_REQUEST, true);
            return;
        }
        RouteTable table = lc.routes();
        String path = table.usesPath() ? ProxyHeaders.pathOf(req.uri()) : null;
        route = table.routeHttp(table.usesHost() ? ProxyHeaders.hostWithoutPort(hostHeader) : null, path,
                req.method().name(), headers::get);
        if (route == null) {
            path = ProxyHeaders.pathOf(req.uri());
            respondError(HttpResponseStatus.NOT_FOUND, "no route for " + req.method() + " " + path
                    + (hostHeader == null ? "" : " on host " + hostHeader), RequestOutcome.NO_ROUTE, false);
            return;
        }
        long max = options.maxRequestBodyBytes();
        if (max > 0 && HttpUtil.getContentLength(req, 0L) > max) {
            respondError(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "request body of "
                    + HttpUtil.getContentLength(req, 0L) + " bytes exceeds the limit of " + max,
                    RequestOutcome.BODY_TOO_LARGE, true);
            return;
        }
        cluster = route.cluster();
        host = cluster.pick();
        if (host == null) {
            respondError(HttpResponseStatus.SERVICE_UNAVAILABLE, "no healthy host in cluster " + cluster.name(),
                    RequestOutcome.NO_HEALTHY_HOST, false);
            return;
        }
        if (HttpUtil.is100ContinueExpected(req)) {
            // Like nginx: the gateway itself invites the body once it knows where it goes.
            headers.remove(HttpHeaderNames.EXPECT);
            ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE,
                    Unpooled.EMPTY_BUFFER), ctx.voidPromise());
        }
        String originalHost = hostHeader;
        ProxyHeaders.stripHopByHop(headers);
        if (options.xForwarded()) {
            ProxyHeaders.addForwarded(headers, clientIp(), originalHost);
        }
        if (!options.preserveHost() || hostHeader == null) {
            headers.set(HttpHeaderNames.HOST, host.address());
        }
        req.setUri(route.rewrite(req.uri()));
        req.setProtocolVersion(HttpVersion.HTTP_1_1);
        host.requestStarted();

        Channel pooled = pool.acquire(host);
        if (pooled != null) {
            reusedConnection = true;
            attach(pooled);
            state = State.PROXYING;
            writeUpstream(req);
        } else {
            connect();
        }
    }

    private void onRequestContent(HttpContent c) {
        switch (state) {
            case DISCARDING -> {
                boolean last = c instanceof LastHttpContent;
                c.release();
                if (last) {
                    requestComplete = true;
                    nextRequest();
                }
            }
            case CONNECTING, PROXYING -> {
                if (state == State.CONNECTING) {
                    queue.add(c); // counted and forwarded once connected
                    return;
                }
                long max = options.maxRequestBodyBytes();
                requestBodyBytes += c.content().readableBytes();
                if (max > 0 && requestBodyBytes > max) {
                    c.release();
                    abortUpstream(null);
                    respondError(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, "request body exceeds the limit of "
                            + max + " bytes", RequestOutcome.BODY_TOO_LARGE, true);
                    return;
                }
                if (c instanceof LastHttpContent) {
                    requestComplete = true;
                }
                writeUpstream(c);
            }
            default -> c.release(); // no exchange to carry it
        }
    }

    private void writeUpstream(HttpObject msg) {
        upstream.write(msg, upstream.voidPromise());
        wroteUpstream = true;
        if (msg instanceof LastHttpContent) {
            long now = lc.ticker().nanoTime();
            responseDeadline = now + route.timeoutNanos();
            armTimer(responseDeadline);
        }
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
        writeUpstream(request);
        if (retried && requestComplete) {
            writeUpstream(LastHttpContent.EMPTY_LAST_CONTENT); // the original (empty) end went to the stale connection
        }
        HttpObject m;
        while (state == State.PROXYING && (m = queue.peek()) != null && !(m instanceof HttpRequest)) {
            queue.poll();
            onRequestContent((HttpContent) m);
        }
        if (upstream != null) {
            upstream.flush();
            wroteUpstream = false;
        }
        updateRead();
    }

    // ---------------------------------------------------------------- upstream events

    void onUpstreamRead(HttpObject msg) {
        if (msg instanceof HttpResponse resp) {
            if (resp.decoderResult().isFailure()) {
                ReferenceCountUtil.release(resp);
                onUpstreamError(resp.decoderResult().cause());
                abortUpstream(Outcome.RESET);
                failUpstream("malformed response from upstream " + host.address());
                return;
            }
            int code = resp.status().code();
            if (code < 200) {
                skipInterim = true; // 1xx: the client already had our own 100 Continue
                ReferenceCountUtil.release(resp);
                return;
            }
            onResponseHead(resp);
            if (resp instanceof LastHttpContent) {
                onResponseComplete();
            }
        } else if (msg instanceof HttpContent c) {
            if (skipInterim) {
                if (c instanceof LastHttpContent) {
                    skipInterim = false;
                }
                c.release();
                return;
            }
            if (!responseStarted) {
                c.release();
                return;
            }
            bytesOut += c.content().readableBytes();
            ctx.write(c, ctx.voidPromise());
            if (c instanceof LastHttpContent) {
                onResponseComplete();
            }
        }
    }

    private void onResponseHead(HttpResponse resp) {
        responseStarted = true;
        responseDeadline = 0;
        status = resp.status().code();
        HttpHeaders h = resp.headers();
        upstreamKeepAlive = HttpUtil.isKeepAlive(resp);
        ProxyHeaders.stripHopByHop(h);
        boolean bodyless = request.method().equals(HttpMethod.HEAD) || status == 204 || status == 304;
        boolean chunked = HttpUtil.isTransferEncodingChunked(resp);
        boolean delimited = bodyless || chunked || h.contains(HttpHeaderNames.CONTENT_LENGTH);
        if (!delimited) {
            // Close-delimited upstream body: chunk it for 1.1 clients, close after it for 1.0.
            upstreamKeepAlive = false;
            if (http10) {
                closeAfterResponse = true;
            } else {
                HttpUtil.setTransferEncodingChunked(resp, true);
            }
        } else if (chunked && http10) {
            h.remove(HttpHeaderNames.TRANSFER_ENCODING);
            closeAfterResponse = true;
        }
        boolean keep = keepAlive && !closeAfterResponse && !lc.draining() && (requestComplete || !requestHasBody);
        closeAfterResponse = !keep;
        if (!keep) {
            h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        } else if (http10) {
            h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
        }
        resp.setProtocolVersion(HttpVersion.HTTP_1_1);
        ctx.write(resp, ctx.voidPromise());
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
        finishExchange(RequestOutcome.PROXIED, status, null);
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
        if (responseStarted) {
            cluster.onOutcome(host, Outcome.RESET);
            finishExchange(RequestOutcome.UPSTREAM_RESET, status, null);
            state = State.CLOSED;
            releaseQueue();
            ctx.close(); // the client cannot be told; a truncated response must not look complete
            return;
        }
        if (reusedConnection && !retried && !requestHasBody && idempotent(request.method())) {
            // A parked connection the upstream had already closed: try once more on a fresh one.
            retried = true;
            connect();
            return;
        }
        cluster.onOutcome(host, Outcome.RESET);
        failUpstream("upstream " + host.address() + " closed the connection before responding");
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
        ((UpstreamHandler) ch.pipeline().get(HttpPipeline.UPSTREAM_HANDLER)).owner(this);
        ch.config().setAutoRead(ctx.channel().isWritable());
    }

    private Channel detachUpstream() {
        Channel up = upstream;
        upstream = null;
        ((UpstreamHandler) up.pipeline().get(HttpPipeline.UPSTREAM_HANDLER)).owner(null);
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
        finishExchange(outcome, st.code(), null); // metrics first: a client that saw the answer sees it counted
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

    private void finishExchange(RequestOutcome outcome, int code, Throwable cause) {
        long elapsed = lc.ticker().nanoTime() - start;
        AccessLog accessLog = lc.accessLog();
        if (accessLog != null) {
            accessLog.log(new AccessLog.Entry(System.currentTimeMillis(), lc.name(), "http", clientIp(),
                    request == null ? "-" : request.method().name() + " " + request.uri(), code, outcome.tag(),
                    host == null ? null : host.address(), bytesOut, elapsed / 1000));
        }
        bytesOut = 0;
        if (host != null) {
            host.requestFinished();
            host = null;
        }
        lc.metrics().requestFinished(route, outcome, code, elapsed);
        responseDeadline = 0;
        route = null;
        cluster = null;
        request = null;
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
        HttpObject m;
        while (state == State.AWAIT_HEAD && (m = queue.poll()) != null) {
            dispatch(m);
        }
        while (state == State.DISCARDING && (m = queue.peek()) != null && !(m instanceof HttpRequest)) {
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
        HttpObject m;
        while ((m = queue.peek()) != null && !(m instanceof HttpRequest)) {
            queue.poll();
            if (m instanceof LastHttpContent) {
                requestComplete = true;
            }
            ReferenceCountUtil.release(m);
        }
    }

    private void releaseQueue() {
        HttpObject m;
        while ((m = queue.poll()) != null) {
            ReferenceCountUtil.release(m);
        }
    }

    private String clientIp() {
        return ctx.channel().remoteAddress() instanceof InetSocketAddress a ? a.getAddress().getHostAddress() : "unknown";
    }

    private static boolean idempotent(HttpMethod m) {
        return m.equals(HttpMethod.GET) || m.equals(HttpMethod.HEAD) || m.equals(HttpMethod.OPTIONS)
                || m.equals(HttpMethod.PUT) || m.equals(HttpMethod.DELETE) || m.equals(HttpMethod.TRACE);
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
