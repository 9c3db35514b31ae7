package io.sluice.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.ChannelInputShutdownReadComplete;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.ReferenceCountUtil;
import io.sluice.codec.http.HttpHead;
import io.sluice.codec.http.ProxyHeads;
import io.sluice.core.time.Scheduler;
import io.sluice.core.time.Ticker;
import io.sluice.server.channel.ConnectionTimer;
import io.sluice.server.channel.SluicePipeline;
import io.sluice.server.metrics.ListenerMetrics;
import io.sluice.server.route.Route;

import java.util.Locale;

/**
 * An upgraded connection (WebSocket or another {@code Upgrade} the route allows) after the upstream's
 * {@code 101 Switching Protocols}: an opaque byte tunnel between the client connection and its
 * dedicated upstream connection, which never goes back to the keep-alive pool.
 *
 * <p>Set-up ({@link #start}): the HTTP decoders of both pipelines are removed (bytes they held past
 * the heads are handed on as tunnel bytes) and one {@link Side} takes their place on each side
 * ({@link SluicePipeline#HTTP_TUNNEL}): before {@code http-proxy} downstream, instead of
 * {@code http-upstream} upstream. From then on every read is written to the other side as it is.
 *
 * <p>Backpressure as in the proxy: when a side's outbound buffer passes its high-water mark, the
 * other side stops reading (autoRead off) until it drains, so the gateway holds at most about a
 * write-buffer's worth per direction whatever the peers' speeds. Half-close is propagated: when one
 * side ends its output (FIN), what it sent is flushed to the other and the other's output is shut
 * down; the tunnel closes once both directions have ended, or when either side closes or resets.
 *
 * <p>Its own idle timeout replaces the HTTP timeouts: no byte either way for the route's
 * {@code tunnel_idle_timeout} closes both sides, on the listener's {@link Scheduler} (one
 * {@link ConnectionTimer}, re-armed lazily: a read costs a clock read). Drain does not end a tunnel
 * early: it counts as a request in flight until it closes, so the drain deadline closes it.
 * Event loop only: both channels are on the same loop.
 */
final class UpgradeTunnel {

    /** Told once when the tunnel has closed (before the client connection's channelInactive goes on). */
    interface EndListener {
        void tunnelClosed(long bytesToClient, long bytesToUpstream);
    }

    private static final byte[] CONNECTION_UPGRADE = "Connection: Upgrade\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private final Side down;
    private final Side up;
    private final ConnectionTimer timer;
    private final Ticker ticker;
    private final long idleNanos;
    private final ListenerMetrics metrics;
    private final EndListener onEnd;
    private long lastActivity;
    private boolean closed;

    private UpgradeTunnel(Channel client, Channel upstream, Scheduler scheduler, long idleNanos, ListenerMetrics metrics,
                          EndListener onEnd) {
        this.ticker = scheduler.ticker();
        this.timer = new ConnectionTimer(scheduler, this::onTimer);
        this.idleNanos = idleNanos;
        this.metrics = metrics;
        this.onEnd = onEnd;
        this.down = new Side(client, true);
        this.up = new Side(upstream, false);
        down.other = up;
        up.other = down;
    }

    // ---------------------------------------------------------------- the handshake

    /**
     * The upgrade the request asks for and the route allows: the first token of its {@code Upgrade}
     * list (as sent) whose protocol name the route lists, when {@code Connection} carries the
     * {@code upgrade} option and the request has no body; else null (the request then goes up as
     * a plain one, its Upgrade removed like any hop-by-hop header). Called only for heads with
     * hop-by-hop headers, so ordinary requests pay nothing.
     */
    static String chosen(HttpHead req, Route route) {
        if (req.hasBody() || req.isHttp10()) {
            return null;
        }
        String upgrade = null;
        boolean connectionUpgrade = false;
        for (int i = 0, n = req.headerCount(); i < n; i++) {
            byte kind = req.kind(i);
            if (kind == HttpHead.HOP && upgrade == null && req.nameIs(i, "upgrade")) {
                upgrade = req.value(i);
            } else if (kind == HttpHead.CONNECTION && !connectionUpgrade) {
                connectionUpgrade = hasToken(req.value(i), "upgrade");
            }
        }
        if (upgrade == null || !connectionUpgrade) {
            return null;
        }
        for (String token : upgrade.split(",")) {
            String t = token.trim();
            int slash = t.indexOf('/');
            String name = (slash < 0 ? t : t.substring(0, slash)).toLowerCase(Locale.ROOT);
            if (!t.isEmpty() && route.allowsUpgrade(name)) {
                return t;
            }
        }
        return null;
    }

    static boolean hasToken(String list, String token) {
        for (String t : list.split(",")) {
            if (t.trim().equalsIgnoreCase(token)) {
                return true;
            }
        }
        return false;
    }

    /** {@code head} (a whole request head; ownership taken) with {@code Upgrade: type} and {@code Connection: Upgrade} added. */
    static ByteBuf withUpgrade(ByteBufAllocator alloc, ByteBuf head, String type) {
        ByteBuf out = alloc.directBuffer(head.readableBytes() + type.length() + 32);
        out.writeBytes(head, head.readerIndex(), head.readableBytes() - 2); // without the final CR LF
        head.release();
        ByteBufUtil.writeAscii(out, "Upgrade: ");
        ByteBufUtil.writeAscii(out, type);
        out.writeByte('\r').writeByte('\n');
        out.writeBytes(CONNECTION_UPGRADE);
        out.writeByte('\r').writeByte('\n');
        return out;
    }

    /**
     * The 101 for the client: the upstream's head minus its hop-by-hop headers, plus its
     * {@code Upgrade} and {@code Connection: Upgrade}. Takes ownership of {@code resp}.
     */
    static ByteBuf switchingHead(ByteBufAllocator alloc, HttpHead resp) {
        String upgrade = resp.header("upgrade");
        ByteBuf head = ProxyHeads.responseHead(alloc, resp, false, false, ProxyHeads.CONNECTION_AS_IS);
        if (head == resp.raw()) {
            head = head.retain(); // the same bytes: keep them past resp's release below
        }
        resp.release();
        ByteBuf out = alloc.directBuffer(head.readableBytes() + 64);
        out.writeBytes(head, head.readerIndex(), head.readableBytes() - 2);
        head.release();
        if (upgrade != null) {
            ByteBufUtil.writeAscii(out, "Upgrade: ");
            ByteBufUtil.writeAscii(out, upgrade);
            out.writeByte('\r').writeByte('\n');
        }
        out.writeBytes(CONNECTION_UPGRADE);
        out.writeByte('\r').writeByte('\n');
        return out;
    }

    // ---------------------------------------------------------------- the tunnel

    /**
     * Writes the 101 to the client and turns both connections into a tunnel. Called on the event
     * loop while the upstream's 101 is being read; {@code upstream}'s {@link UpstreamHandler} must no
     * longer have an owner.
     *
     * @param head the 101 head for the client (ownership taken)
     */
    static void start(ChannelHandlerContext proxyCtx, ByteBuf head, Channel upstream, Scheduler scheduler,
                      long idleNanos, ListenerMetrics metrics, EndListener onEnd) {
        Channel client = proxyCtx.channel();
        UpgradeTunnel t = new UpgradeTunnel(client, upstream, scheduler, idleNanos, metrics, onEnd);
        metrics.tunnelOpened();
        proxyCtx.write(head, proxyCtx.voidPromise());
        ChannelPipeline dp = client.pipeline();
        dp.addBefore(SluicePipeline.HTTP_PROXY, SluicePipeline.HTTP_TUNNEL, t.down);
        ChannelPipeline upp = upstream.pipeline();
        upp.addAfter(SluicePipeline.HTTP_UPSTREAM_DECODER, SluicePipeline.HTTP_TUNNEL, t.up);
        upp.remove(SluicePipeline.HTTP_UPSTREAM);
        t.touch();
        // removing a decoder hands the bytes it holds past the head to the tunnel side after it
        dp.remove(SluicePipeline.HTTP_DECODER);
        upp.remove(SluicePipeline.HTTP_UPSTREAM_DECODER);
        client.flush();
        upstream.flush();
        if (!upstream.isActive()) {
            t.close();
            return;
        }
        // a FIN from one side becomes a FIN to the other (ChannelInputShutdownEvent), not a close
        client.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
        upstream.config().setOption(ChannelOption.ALLOW_HALF_CLOSURE, true);
        client.config().setAutoRead(upstream.isWritable());
        upstream.config().setAutoRead(client.isWritable());
    }

    private void touch() {
        lastActivity = ticker.nanoTime();
        if (!timer.isArmed() && !closed) {
            timer.arm(lastActivity + idleNanos);
        }
    }

    private void onTimer() {
        if (closed) {
            return;
        }
        long due = lastActivity + idleNanos;
        if (ticker.nanoTime() - due >= 0) {
            close();
        } else {
            timer.arm(due);
        }
    }

    /** Ends the tunnel: flushes what each side was given, closes both, reports once. */
    private void close() {
        if (closed) {
            return;
        }
        closed = true;
        timer.cancel();
        metrics.tunnelClosed();
        closeAfterFlush(up.ch);
        closeAfterFlush(down.ch);
        onEnd.tunnelClosed(down.written, up.written);
    }

    private static void closeAfterFlush(Channel ch) {
        if (ch.isActive()) {
            ch.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }
    }

    /** One end of the tunnel: reads from its channel go to the other side's channel. */
    final class Side extends ChannelInboundHandlerAdapter {
        final Channel ch;
        final boolean client;
        Side other;
        /** Bytes written to {@link #ch}. */
        long written;
        /** This side sent its FIN. */
        private boolean inputShut;
        private boolean pendingFlush;

        Side(Channel ch, boolean client) {
            this.ch = ch;
            this.client = client;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (closed || !(msg instanceof ByteBuf b)) {
                ReferenceCountUtil.release(msg);
                return;
            }
            lastActivity = ticker.nanoTime();
            other.written += b.readableBytes();
            other.ch.write(b, other.ch.voidPromise());
            other.pendingFlush = true;
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (other.pendingFlush) {
                other.pendingFlush = false;
                other.ch.flush();
                if (!other.ch.isWritable()) {
                    ch.config().setAutoRead(false); // resumes when the other side drains
                }
            }
            // not passed on: the HTTP handler behind (downstream) has nothing to do with tunnel bytes
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (!closed) {
                other.ch.config().setAutoRead(ch.isWritable());
            }
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt == ChannelInputShutdownEvent.INSTANCE) {
                onInputShutdown();
                return;
            }
            if (evt instanceof ChannelInputShutdownReadComplete) {
                return;
            }
            ctx.fireUserEventTriggered(evt); // e.g. the drain event, for the proxy handler behind
        }

        /** This side's peer ended its output: pass the FIN on after what it sent; both ended → close. */
        private void onInputShutdown() {
            if (closed || inputShut) {
                return;
            }
            inputShut = true;
            lastActivity = ticker.nanoTime();
            if (other.inputShut || !(other.ch instanceof DuplexChannel d)) {
                close();
                return;
            }
            other.pendingFlush = false;
            other.ch.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(f -> {
                if (f.isSuccess() && d.isActive()) {
                    d.shutdownOutput();
                } else {
                    close();
                }
            });
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            close();
            if (client) {
                ctx.fireChannelInactive(); // the proxy handler counts the closed connection
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // resets: channelInactive ends the tunnel
        }
    }
}
