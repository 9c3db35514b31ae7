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
        cluster = route.cluster();
        host = cluster.pick();
        if (host == null) {
            respondError(503, "no healthy host in cluster " + cluster.name(), RequestOutcome.NO_HEALTHY_HOST);
            return;
        }
        CharSequence expect = h.get("expect");
        if (expect != null && !endStream && AsciiString.contentEqualsIgnoreCase("100-continue", expect)) {
            // like the HTTP/1.1 path (and nginx): the gateway itself invites the body once it knows where it goes
            ctx.writeAndFlush(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().status("100"), false), ctx.voidPromise());
        }
        String forward = path.equals(rawPath) ? target : path + query;
        if (route.rewrites()) {
            forward = route.rewrite(forward);
        }
        String hostValue = !options.preserveHost() ? host.address() : authority;
        if (cluster.config().upstreamProtocol().http2()) { // http2: h2c / h2 upstream
            host.requestStarted();
            state = State.PROXYING;
            requestComplete = endStream;
            h2Upstream = new H2Forward(this, ctx);
            if (grpc) { // the gateway's deadline too: grpc-timeout capped by the route timeout
                long t = Grpc.timeoutNanos(h.get("grpc-timeout"));
                if (t >= 0) {
                    callDeadline = start + Math.min(t, route.timeoutNanos());
                    timer.arm(callDeadline);
                }
            }
            h2Upstream.start(conn.pool, host, cluster.config(), h, endStream, forward, hostValue);
            return;
        }
        chunked = !endStream && contentLength < 0;
        boolean xf = options.xForwarded();
        head = H2Translation.requestHead(ctx.alloc(), method, forward, hostValue, h, chunked,
                xf ? (conn.clientIp() == null ? "unknown" : conn.clientIp()) : null, xf && conn.trusted(options), authority);
        if (tls != null) { // TLS: the verified identity replaces the client's field; X-Forwarded-Proto https
            head = tls.rewrite(ctx.alloc(), head);
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
                        upstream.write(size, upstream.voidPromise());
                        upstream.write(content, upstream.voidPromise());
                        upstream.write(ctx.alloc().buffer(2).writeBytes(CRLF), upstream.voidPromise());
                    } else {
                        upstream.write(content, upstream.voidPromise());
                    }
                } else {
                    d.release();
                }
                if (last) {
                    if (chunked) {
                        upstream.write(ctx.alloc().buffer(5).writeBytes(LAST_CHUNK), upstream.voidPromise());
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
            upstream.write(H2Translation.trailerSection(ctx.alloc(), f.headers()), upstream.voidPromise());
        } // with a content-length the trailers cannot go on an HTTP/1.1 hop: dropped
        requestDone();
    }

    private void requestDone() {
        requestComplete = true;
        lastBodyAt = 0;
        if (!responseStarted) {
            responseDeadline = ticker.nanoTime() + route.timeoutNanos();
            timer.arm(responseDeadline);
        }
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
        connectDeadline = ticker.nanoTime() + cluster.config().connectTimeout().toNanos();
        timer.arm(connectDeadline);
        Host target = host;
        ClusterBalancer c = cluster;
        HttpUpstreamPool pool = conn.pool;
        pool.connect(target, c.config()).addListener((ChannelFuture f) -> onConnected(f, target, c, pool));
    }

    private void onConnected(ChannelFuture f, Host target, ClusterBalancer c, HttpUpstreamPool pool) {
        if (state != State.CONNECTING || target != host) {
            if (f.isSuccess()) {
                pool.release(target, f.channel(), c.config()); // the stream died meanwhile; keep the connection
            }
            return;
        }
        connectDeadline = 0;
        if (!f.isSuccess()) {
            boolean timeout = f.cause() instanceof ConnectTimeoutException;
            c.onOutcome(target, Outcome.CONNECT_FAILURE);
            releaseQueue();
            respondError(timeout ? 504 : 502, (timeout ? "timed out connecting to " : "cannot connect to ")
                    + target.address() + " of cluster " + c.name(),
                    timeout ? RequestOutcome.CONNECT_TIMEOUT : RequestOutcome.CONNECT_FAILURE);
            return;
        }
        attach(f.channel());
        state = State.PROXYING;
        writeHead();
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
            responseStarted = true;
            responseDeadline = 0;
            status = resp.status();
            upstreamKeepAlive = resp.isKeepAlive() && !resp.isCloseDelimited();
            if (resp.isComplete() && (resp.contentLength() > 0 || resp.isChunked())) {
                upstreamHandler.markDirty(ClusterMetrics.RETIRED_BODY_NOT_ALLOWED);
            }
            Http2Headers out = H2Translation.responseHeaders(resp);
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
            } else {
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
        } else {
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
        if (lc.accessLog() != null) {
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
