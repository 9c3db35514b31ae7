package io.sluice.server.http2;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.util.ReferenceCountUtil;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.server.metrics.RequestOutcome;
import io.sluice.server.policy.retry.RetryPolicy;

import java.util.ArrayDeque;

/**
 * One downstream HTTP/2 stream proxied to an HTTP/2 ({@code upstream_protocol: h2c}) upstream
 * stream, frame by frame: request HEADERS (with the route's path and host), DATA and trailers up;
 * response HEADERS, DATA and trailers (gRPC status) down; RST_STREAM either way resets the other
 * side. Flow control is backpressure: each side is read only while the other can be written (the
 * stream channels return window as they read). Owned by the {@link H2StreamProxy} that routed the
 * stream; everything runs on the connection's event loop.
 */
@io.netty.channel.ChannelHandler.Sharable // on the retried stream too; only the current upstream stream counts
final class H2Forward extends ChannelInboundHandlerAdapter {

    private final H2StreamProxy proxy;
    private final ChannelHandlerContext client;
    private final ArrayDeque<Object> pending = new ArrayDeque<>(2);
    private Http2StreamChannel upstream;
    private boolean done;
    private boolean responseStarted;
    private int status;
    private long bytesOut;
    /** What was sent upstream, kept until the response starts so a refused stream (REFUSED_STREAM, or left out by a GOAWAY) can be sent again once; null = not kept. */
    private ArrayDeque<Object> replay = new ArrayDeque<>(2);
    private long replayBytes;
    /** REFUSED_STREAM retries so far: a refused stream was not processed (RFC 9113 §8.7), so it is safe to send again. */
    private int refusedRetries;
    private static final int MAX_REFUSED_RETRIES = 1;
    private io.sluice.server.http.HttpUpstreamPool up;
    /** The upstream stream was left out by the peer's GOAWAY (above its last-stream-id): never processed. */
    private boolean goAwayRefused;
    private io.sluice.server.metrics.UpstreamH2Metrics meters;
    private Host host;
    private ClusterConfig cluster;
    private static final long MAX_REPLAY = 64 * 1024;
    /** What is kept for a retry: 64 KiB, or less when the route's retry policy says so ({@code max_body_bytes}). */
    private long replayLimit = MAX_REPLAY;

    H2Forward(H2StreamProxy proxy, ChannelHandlerContext client) {
        this.proxy = proxy;
        this.client = client;
    }

    /** With a retry policy: keep at most {@code bytes} of request body for a retry (never more than 64 KiB). */
    void replayLimit(long bytes) {
        replayLimit = Math.min(MAX_REPLAY, bytes);
    }

    /** Sends the request head {@code h} (as the proxy built it for {@code host}) to a stream on a pooled connection to {@code host}. */
    void start(io.sluice.server.http.HttpUpstreamPool up, Host host, ClusterConfig cluster, Http2Headers h, boolean endStream) {
        pending.add(new DefaultHttp2HeadersFrame(h, endStream));
        this.up = up;
        this.host = host;
        this.cluster = cluster;
        io.sluice.server.metrics.ClusterMetrics cm = up.clusterMeters(cluster.name());
        this.meters = cm == null ? null : cm.h2();
        H2UpstreamPool.current().open(up, host, cluster, this, this::attached);
    }

    private void attached(Http2StreamChannel s, String failure) {
        if (done) {
            if (s != null) {
                s.close();
            }
            return;
        }
        if (s == null) {
            if (policyRetry(RetryPolicy.Failure.CONNECT_FAILURE, 0, false)) {
                return; // the proxy restarts this forwarder after the back-off
            }
            done = true;
            releasePending();
            proxy.forwardFailed(RequestOutcome.CONNECT_FAILURE, failure);
            return;
        }
        upstream = s;
        Object m;
        while ((m = pending.poll()) != null) {
            send(m);
        }
        s.flush();
        s.config().setAutoRead(client.channel().isWritable());
        client.channel().config().setAutoRead(s.isWritable());
    }

    // ------------------------------------------------------------ client side (called by the proxy)

    /** A frame from the client after the request head. */
    void fromClient(Object msg) {
        if (msg instanceof Http2ResetFrame) {
            clientGone();
            return;
        }
        Object out;
        if (msg instanceof Http2DataFrame d) {
            out = new DefaultHttp2DataFrame(d.content(), d.isEndStream(), d.padding()); // the content moves on
        } else if (msg instanceof Http2HeadersFrame f) {
            out = new DefaultHttp2HeadersFrame(f.headers(), f.isEndStream());
        } else {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (done) {
            ReferenceCountUtil.release(out);
        } else if (upstream == null) {
            pending.add(out);
            client.channel().config().setAutoRead(false); // until the upstream stream exists
        } else {
            send(out);
        }
    }

    void clientReadComplete() {
        if (upstream != null) {
            upstream.flush();
        }
    }

    void clientWritable(boolean writable) {
        if (upstream != null) {
            upstream.config().setAutoRead(writable);
        }
    }

    /** The gateway gave up on the call (its deadline): the upstream stream is reset; the proxy answers the client. */
    void cancel() {
        if (done) {
            return;
        }
        done = true;
        releasePending();
        if (upstream != null && upstream.isActive()) {
            upstream.writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.CANCEL)).addListener(f -> upstream.close());
        }
    }

    boolean responseStarted() {
        return responseStarted;
    }

    /** The client reset or closed its stream: the upstream stream is reset (RST_STREAM CANCEL). */
    void clientGone() {
        if (done) {
            return;
        }
        done = true;
        releasePending();
        if (upstream != null && upstream.isActive()) {
            upstream.writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.CANCEL)).addListener(f -> upstream.close());
        }
        proxy.forwardEnded(RequestOutcome.CLIENT_CLOSED, responseStarted ? status : 0, bytesOut);
    }

    // ------------------------------------------------------------ upstream side (this handler)

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (done || ctx.channel() != upstream) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof Http2HeadersFrame f) {
            if (!responseStarted) {
                CharSequence s = f.headers().status();
                if (s != null && s.length() == 3 && s.charAt(0) == '1') {
                    return; // interim responses are not relayed
                }
                int st = s == null ? 0 : parse(s);
                if (st >= 500 && policyRetry(RetryPolicy.Failure.STATUS, st, false)) {
                    return; // the 5xx is not relayed: the request goes to another host after the back-off
                }
                responseStarted = true;
                dropReplay();
                status = st;
                proxy.responseHeaders(f.headers()); // traffic: echoed request id, response header rules
            }
            client.write(new DefaultHttp2HeadersFrame(f.headers(), f.isEndStream()), client.voidPromise());
            if (f.isEndStream()) {
                complete();
            }
        } else if (msg instanceof Http2DataFrame d) {
            bytesOut += d.content().readableBytes();
            boolean last = d.isEndStream();
            client.write(new DefaultHttp2DataFrame(d.content(), last, d.padding()), client.voidPromise());
            if (last) {
                complete();
            }
        } else if (msg instanceof Http2ResetFrame r) {
            if (r.errorCode() == Http2Error.REFUSED_STREAM.code() && ctx.channel() == upstream) {
                if (meters != null) {
                    meters.streamRefused();
                }
                if (retry()) {
                    return;
                }
            }
            if (!responseStarted && policyRetry(RetryPolicy.Failure.RESET, 0,
                    r.errorCode() == Http2Error.REFUSED_STREAM.code())) {
                return; // the retry policy's attempt on another host, after the back-off
            }
            upstreamReset(r.errorCode());
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        client.flush();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (!done && ctx.channel() == upstream) {
            client.channel().config().setAutoRead(ctx.channel().isWritable());
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof io.netty.handler.codec.http2.Http2GoAwayFrame && ctx.channel() == upstream) {
            goAwayRefused = true; // the codec closes this stream next: the peer never processed it (RFC 9113 §6.8)
        }
        ReferenceCountUtil.release(evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (!done && ctx.channel() == upstream) { // closed without an end: the connection failed or GOAWAY left this stream out
            if (goAwayRefused) {
                goAwayRefused = false;
                if (meters != null) {
                    meters.streamRefused();
                }
                if (retry()) { // on another connection: the draining one takes no new streams
                    return;
                }
            }
            // the connection was lost; which way is not known here, so the policy sees a reset
            // (idempotent methods), not a refusal (any method)
            if (!responseStarted && policyRetry(RetryPolicy.Failure.RESET, 0, false)) {
                return;
            }
            upstreamReset(Http2Error.REFUSED_STREAM.code());
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }

    /** Writes {@code m} upstream, keeping a copy for a retry while the response has not started. */
    private void send(Object m) {
        if (replay != null) {
            long n = m instanceof Http2DataFrame d ? d.content().readableBytes() : 0;
            if (replayBytes + n > replayLimit) {
                dropReplay();
            } else {
                replayBytes += n;
                replay.add(m instanceof Http2DataFrame d
                        ? new DefaultHttp2DataFrame(d.content().retainedDuplicate(), d.isEndStream(), d.padding())
                        : m);
            }
        }
        upstream.write(m, upstream.voidPromise());
    }

    private void dropReplay() {
        if (replay != null) {
            Object m;
            while ((m = replay.poll()) != null) {
                ReferenceCountUtil.release(m);
            }
            replay = null;
        }
    }

    /** RST_STREAM REFUSED_STREAM or a GOAWAY before any response: the server did not process it (RFC 9113 §8.7): again on another stream, once. */
    private boolean retry() {
        if (refusedRetries >= MAX_REFUSED_RETRIES || replay == null || responseStarted || done) {
            return false;
        }
        refusedRetries++;
        requeue();
        if (meters != null) {
            meters.streamMoved();
        }
        H2UpstreamPool.current().open(up, host, cluster, this, this::attached);
        return true;
    }

    /**
     * The attempt failed before its response: if what was sent is still kept (the whole request so
     * far, up to 64 KiB) and the proxy's retry policy takes it, the kept frames are queued again
     * and the current upstream stream (if any) closed; the proxy calls {@link #restart} after the back-off.
     */
    private boolean policyRetry(RetryPolicy.Failure f, int status, boolean refused) {
        if (replay == null || responseStarted || done || !proxy.retryForward(f, status, refused)) {
            return false;
        }
        requeue();
        client.channel().config().setAutoRead(false); // DATA waits in pending until the next stream
        return true;
    }

    /**
     * The proxy's retry after its back-off: the kept request again, on a stream to {@code next}
     * with head {@code h} (the first frame's end-of-stream flag kept).
     */
    void restart(Host next, Http2Headers h) {
        if (done) {
            return;
        }
        Object first = pending.peekFirst();
        if (first instanceof Http2HeadersFrame f) {
            pending.pollFirst();
            pending.addFirst(new DefaultHttp2HeadersFrame(h, f.isEndStream()));
        }
        this.host = next;
        H2UpstreamPool.current().open(up, next, cluster, this, this::attached);
    }

    /** The kept frames (then what is still pending) become the pending frames again; the old upstream stream closes. */
    private void requeue() {
        ArrayDeque<Object> again = new ArrayDeque<>(replay.size());
        Object m;
        while ((m = replay.poll()) != null) {
            again.add(m instanceof Http2HeadersFrame f ? new DefaultHttp2HeadersFrame(f.headers(), f.isEndStream()) : m);
        }
        replayBytes = 0;
        again.addAll(pending);
        pending.clear();
        pending.addAll(again);
        Http2StreamChannel old = upstream;
        upstream = null;
        if (old != null) {
            old.close();
        }
    }

    private void upstreamReset(long code) {
        done = true;
        releasePending();
        if (!responseStarted) {
            proxy.forwardFailed(RequestOutcome.UPSTREAM_RESET);
            return;
        }
        client.writeAndFlush(new DefaultHttp2ResetFrame(code == Http2Error.NO_ERROR.code() ? Http2Error.CANCEL.code() : code),
                client.voidPromise());
        proxy.forwardEnded(RequestOutcome.UPSTREAM_RESET, status, bytesOut);
    }

    private void complete() {
        done = true;
        client.flush();
        if (upstream.isActive()) { // the request side is still open: the child's close sends RST_STREAM CANCEL
            upstream.close();
        }
        proxy.forwardEnded(RequestOutcome.PROXIED, status, bytesOut);
    }

    private void releasePending() {
        dropReplay();
        Object m;
        while ((m = pending.poll()) != null) {
            ReferenceCountUtil.release(m);
        }
    }

    private static int parse(CharSequence s) {
        int v = 0;
        for (int i = 0; i < s.length(); i++) {
            v = v * 10 + (s.charAt(i) - '0');
        }
        return v;
    }

    /** The upstream stream (tests), or null before it opened. */
    Channel upstream() {
        return upstream;
    }
}
