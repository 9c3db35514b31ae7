package io.sluice.server.http;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.util.ReferenceCountUtil;
import io.sluice.codec.http.HttpHead;
import io.sluice.codec.http.ProxyHeads;
import io.sluice.core.cluster.Host;
import io.sluice.core.time.Cancellable;
import io.sluice.core.time.Scheduler;
import io.sluice.server.channel.SluicePipeline;
import io.sluice.server.metrics.ClusterMetrics;
import io.sluice.server.route.MirrorTarget;

import java.nio.charset.StandardCharsets;

/**
 * One shadow copy of one request ({@code mirrors} on a route; docs/traffic.md): fire and
 * forget. The client's exchange never waits for it and never sees its result.
 *
 * <p>Lifecycle, all on the client connection's event loop: {@link #begin} samples the route's
 * exact fraction, takes one of the target's {@code max_concurrent} slots (none free → counted
 * {@code dropped}, nothing buffered), skips requests whose declared body is over
 * {@code max_body_bytes} ({@code too_large}) and builds the shadow head: the request as forwarded,
 * with {@code Host: <client's host>-shadow} ({@code -shadow} before any port; the shadow cluster's
 * name when the request had no host) and
 * {@code Connection: close}. {@link #body} keeps a retained slice of every body piece the primary
 * forwards (the same bytes, chunk framing included; a chunked body that grows past the limit is
 * released and counted {@code too_large}). Once the body is complete the copy goes to a host of the
 * shadow cluster over a connection of its own (the cluster's connect timeout; the whole mirror
 * bounded by the mirror's {@code timeout}); the response is read and discarded, and the connection
 * closed when the shadow closes it or the timeout fires. A request that ends before its body was
 * complete (client gone, early answer) is {@code abandoned}. Results: {@code sluice_mirror_requests_total{cluster,result}}.
 *
 * <p>Memory: at most {@code max_concurrent × (head + max_body_bytes)} per route; a slow shadow holds
 * slots and further mirrors are dropped and counted, never queued.
 */
public final class Mirror extends ChannelInboundHandlerAdapter {

    private static final byte[] CONNECTION_CLOSE_END = "Connection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    private final MirrorTarget target;
    private final ClusterMetrics meters;
    private final Scheduler scheduler;
    private final Bootstrap template;
    private final long maxBody;
    /** The next mirror of the same request (a route may list several). */
    private Mirror next;
    private ByteBuf head;
    private CompositeByteBuf body;
    private long payload;
    private boolean complete;
    private boolean done;
    private boolean answered;
    private Host host;
    private Channel channel;
    private Cancellable timer = Cancellable.NOOP;

    private Mirror(MirrorTarget target, ClusterMetrics meters, Scheduler scheduler, Bootstrap template) {
        this.target = target;
        this.meters = meters;
        this.scheduler = scheduler;
        this.template = template;
        this.maxBody = target.policy().maxBodyBytes();
    }

    /**
     * Starts the mirrors of one request; returns the first (chained) or null when none applies.
     * Called after the primary's head was built, while {@code req} is still valid.
     *
     * @param rewritten the rewritten target, or null
     * @param complete  true when the request has no body (it is sent at once)
     */
    static Mirror begin(MirrorTarget[] targets, ByteBufAllocator alloc, HttpHead req, String rewritten,
                        String clientIp, boolean trustedPeer, boolean dropExpect, boolean complete,
                        HttpUpstreamPool pool, Scheduler scheduler) {
        return begin(targets, req.contentLength(), complete, pool, scheduler,
                cluster -> shadowHead(alloc, req, rewritten, clientIp, trustedPeer, dropExpect, cluster));
    }

    /**
     * {@link #begin(MirrorTarget[], ByteBufAllocator, HttpHead, String, String, boolean, boolean, boolean, HttpUpstreamPool, Scheduler)}
     * for a request that did not arrive as HTTP/1.1 (an HTTP/2 stream): {@code shadowHead} builds
     * the shadow's HTTP/1.1 head (ending in {@code Connection: close}, see {@link #closing}) given the
     * shadow cluster's name; {@code declared} is the request's content-length (-1: none).
     */
    public static Mirror begin(MirrorTarget[] targets, long declared, boolean complete, HttpUpstreamPool pool,
                               Scheduler scheduler, java.util.function.Function<String, ByteBuf> shadowHead) {
        Mirror first = null;
        Mirror last = null;
        for (MirrorTarget t : targets) {
            if (!t.sample()) {
                continue;
            }
            ClusterMetrics m = pool.meters(t.cluster().name());
            if (declared > t.policy().maxBodyBytes()) {
                count(m, ClusterMetrics.MIRROR_TOO_LARGE);
                continue;
            }
            if (!t.acquire()) {
                count(m, ClusterMetrics.MIRROR_DROPPED);
                continue;
            }
            Mirror mirror = new Mirror(t, m, scheduler, pool.template());
            mirror.head = shadowHead.apply(t.cluster().name());
            if (complete) {
                mirror.complete = true;
                mirror.send();
            } else {
                mirror.body = mirror.head.alloc().compositeDirectBuffer(1024);
            }
            if (first == null) {
                first = mirror;
            } else {
                last.next = mirror;
            }
            last = mirror;
        }
        return first;
    }

    /** Feeds a piece of the request body (as forwarded; the caller keeps its own reference) to every mirror. */
    public static void body(Mirror m, ByteBuf content, int payloadBytes, boolean lastPiece) {
        for (; m != null; m = m.next) {
            m.onBody(content, payloadBytes, lastPiece);
        }
    }

    /** The client's exchange ended: mirrors still waiting for body are abandoned. */
    public static void exchangeEnded(Mirror m) {
        for (; m != null; m = m.next) {
            if (!m.complete && !m.done) {
                m.finish(ClusterMetrics.MIRROR_ABANDONED);
            }
        }
    }

    private void onBody(ByteBuf content, int payloadBytes, boolean lastPiece) {
        if (done || complete) {
            return;
        }
        payload += payloadBytes;
        if (payload > maxBody) {
            finish(ClusterMetrics.MIRROR_TOO_LARGE);
            return;
        }
        if (content.isReadable()) {
            body.addComponent(true, content.retainedSlice());
        }
        if (lastPiece) {
            complete = true;
            send();
        }
    }

    private void send() {
        host = target.cluster().pick();
        if (host == null) {
            finish(ClusterMetrics.MIRROR_FAILED);
            return;
        }
        host.requestStarted();
        timer = scheduler.schedule(() -> finish(answered ? ClusterMetrics.MIRROR_SENT : ClusterMetrics.MIRROR_TIMEOUT),
                target.timeoutNanos());
        Mirror self = this;
        ChannelFuture f = template.clone()
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS,
                        (int) Math.min(Integer.MAX_VALUE, target.cluster().config().connectTimeout().toMillis()))
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        if (meters != null) {
                            ch.pipeline().addLast(SluicePipeline.UPSTREAM_METER, meters.connectionHandler());
                        }
                        ch.pipeline().addLast(self);
                    }
                })
                .connect(host.host(), host.port());
        channel = f.channel();
        f.addListener((ChannelFuture cf) -> {
            if (!cf.isSuccess()) {
                finish(ClusterMetrics.MIRROR_FAILED);
            } else if (done) {
                cf.channel().close();
            } else {
                ByteBuf h = head;
                head = null;
                cf.channel().write(h, cf.channel().voidPromise());
                if (body != null) {
                    ByteBuf b = body;
                    body = null;
                    cf.channel().write(b, cf.channel().voidPromise());
                }
                cf.channel().flush();
            }
        });
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        answered = true; // the shadow's response: read and discarded
        ReferenceCountUtil.release(msg);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        finish(answered ? ClusterMetrics.MIRROR_SENT : ClusterMetrics.MIRROR_FAILED);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close(); // a reset: channelInactive counts it
    }

    /** Ends this mirror once: counts, frees its slot, buffers and connection. */
    private void finish(int result) {
        if (done) {
            return;
        }
        done = true;
        timer.cancel();
        target.release();
        count(meters, result);
        if (host != null) {
            host.requestFinished();
        }
        if (head != null) {
            head.release();
            head = null;
        }
        if (body != null) {
            body.release();
            body = null;
        }
        if (channel != null) {
            channel.close();
        }
    }

    private static void count(ClusterMetrics m, int result) {
        if (m != null) {
            m.mirrored(result);
        }
    }

    /** The request head as forwarded, with the shadow's Host and {@code Connection: close}. */
    private static ByteBuf shadowHead(ByteBufAllocator alloc, HttpHead req, String rewritten, String clientIp,
                                      boolean trustedPeer, boolean dropExpect, String cluster) {
        String authority = req.authority();
        ByteBuf h = ProxyHeads.requestHead(alloc, req, rewritten, shadowHost(authority == null ? cluster : authority),
                clientIp, trustedPeer, dropExpect);
        return closing(alloc, h);
    }

    /** {@code h} (a complete HTTP/1.1 request head) with {@code Connection: close}; takes ownership of {@code h}. */
    public static ByteBuf closing(ByteBufAllocator alloc, ByteBuf h) {
        ByteBuf out = alloc.directBuffer(h.readableBytes() + CONNECTION_CLOSE_END.length);
        out.writeBytes(h, h.readerIndex(), h.readableBytes() - 2); // without the blank line
        out.writeBytes(CONNECTION_CLOSE_END);
        h.release();
        return out;
    }

    /** {@code example.com:8080} → {@code example.com-shadow:8080} (Envoy's rule); IPv6 literals keep their brackets. */
    public static String shadowHost(String authority) {
        int colon = authority.lastIndexOf(':');
        if (colon > 0 && authority.indexOf(']', colon) < 0 && authority.substring(colon + 1).chars().allMatch(Character::isDigit)) {
            return authority.substring(0, colon) + "-shadow" + authority.substring(colon);
        }
        return authority + "-shadow";
    }
}
