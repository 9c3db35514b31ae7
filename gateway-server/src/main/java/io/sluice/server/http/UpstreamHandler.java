package io.sluice.server.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.sluice.codec.http.Http1Decoder;
import io.sluice.codec.http.HttpBody;
import io.sluice.codec.http.HttpDecodeError;
import io.sluice.codec.http.HttpHead;
import io.sluice.core.cluster.Host;
import io.sluice.server.metrics.ClusterMetrics;

/**
 * Upstream HTTP pipeline, {@code http-upstream} ({@link io.sluice.server.channel.SluicePipeline}):
 * the last handler, after the response {@link Http1Decoder}. While a request is in flight it hands
 * every decoded response part to its owner, an {@link UpstreamListener} (the downstream
 * {@link HttpProxyHandler}); while the connection idles in the pool it owns nothing, and anything
 * the upstream sends unasked (a decoded message, or bytes the decoder holds as the start of one)
 * is dropped with the connection. Lives on the owner's event loop.
 *
 * <p>It also keeps what decides whether the connection may be reused (see {@link #dirt()}): a
 * connection goes back to the pool only when nothing it received can belong to a later exchange.
 */
public final class UpstreamHandler extends ChannelInboundHandlerAdapter {

    private final HttpUpstreamPool pool;
    private final Host host;
    private final Http1Decoder decoder;
    private UpstreamListener owner;
    /** Sweep generation when the connection was parked in the pool. */
    long idleSince;
    /** Sweep periods this connection may stay parked. */
    long idleLimit = 1;
    /** Requests this connection has carried. */
    int uses;
    /** A {@code ClusterMetrics.RETIRED_*} reason this connection must not be reused for, or -1. */
    private int dirty = -1;

    /** The cluster's meters (in-use connections), or null. */
    private final ClusterMetrics meters;

    UpstreamHandler(HttpUpstreamPool pool, Host host, Http1Decoder decoder, ClusterMetrics meters) {
        this.pool = pool;
        this.host = host;
        this.decoder = decoder;
        this.meters = meters;
    }

    /** The next response answers a HEAD request. */
    public void expectBodylessResponse(boolean on) {
        decoder.expectBodylessResponse(on);
    }

    /** De-chunk the current response body (for an HTTP/1.0 client). */
    public void dechunk(boolean on) {
        decoder.dechunk(on);
    }

    /**
     * The exchange in flight saw something that makes the connection unfit for reuse, e.g. a
     * response framed without a body whose head announced one: its bytes may still come.
     */
    public void markDirty(int reason) {
        if (dirty < 0) {
            dirty = reason;
        }
    }

    /**
     * Why this connection, whose exchange just ended, must not be reused ({@code ClusterMetrics.RETIRED_*}),
     * or -1 when it is clean: nothing marked it and the decoder holds no byte beyond the response
     * (bytes of the same read past its end are there). Two field reads; called by the pool on release.
     */
    int dirt() {
        if (dirty >= 0) {
            return dirty;
        }
        return decoder.bufferedBytes() > 0 ? ClusterMetrics.RETIRED_AFTER_RESPONSE : -1;
    }

    /** Closes the connection instead of reusing it, counting why. */
    void retire(Channel ch, int reason) {
        if (ch.isActive()) {
            if (meters != null) {
                meters.connectionRetired(reason);
            }
            ch.close();
        }
    }

    /** The handler of an upstream connection: always the last in its pipeline (O(1), no name lookup). */
    public static UpstreamHandler of(Channel ch) {
        return (UpstreamHandler) ch.pipeline().last();
    }

    Host host() {
        return host;
    }

    public void owner(UpstreamListener newOwner) {
        if (meters != null && (owner == null) != (newOwner == null)) {
            if (newOwner != null) {
                meters.connectionBorrowed();
            } else {
                meters.connectionReturned();
            }
        }
        this.owner = newOwner;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        UpstreamListener o = owner;
        if (o != null && (msg instanceof HttpHead || msg instanceof HttpBody || msg instanceof HttpDecodeError)) {
            o.onUpstreamRead(msg); // takes ownership
        } else {
            // An idle connection must not talk: drop what it sent and the connection with it.
            ReferenceCountUtil.release(msg);
            retire(ctx.channel(), ClusterMetrics.RETIRED_WHILE_IDLE);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        UpstreamListener o = owner;
        if (o != null) {
            o.onUpstreamReadComplete();
        } else if (decoder.bufferedBytes() > 0) {
            // Unasked bytes the decoder keeps as the start of a message: they would prefix the
            // next exchange's response.
            retire(ctx.channel(), ClusterMetrics.RETIRED_WHILE_IDLE);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        UpstreamListener o = owner;
        if (o != null) {
            o.onUpstreamWritabilityChanged();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        UpstreamListener o = owner;
        owner(null);
        if (o != null) {
            o.onUpstreamInactive(ctx.channel());
        } else {
            pool.removeIdle(host, ctx.channel());
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // Resets and decode failures alike: closing reports the loss through channelInactive.
        UpstreamListener o = owner;
        if (o != null) {
            o.onUpstreamError(cause);
        }
        ctx.close();
    }
}
