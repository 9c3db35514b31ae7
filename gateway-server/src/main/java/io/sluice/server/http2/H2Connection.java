package io.sluice.server.http2;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.util.ReferenceCountUtil;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.time.Scheduler;
import io.sluice.server.channel.ConnectionTimer;
import io.sluice.server.channel.DrainEvent;
import io.sluice.server.http.HttpListenerContext;
import io.sluice.server.http.HttpUpstreamPool;

import java.net.InetSocketAddress;

/**
 * Downstream HTTP/2 connection, {@code h2-connection}: the last handler of the connection's own
 * pipeline ({@code [meter →] h2-codec → h2-multiplex → h2-connection}). What every stream of the
 * connection shares (the listener, the upstream pool and scheduler of its event loop, the client's
 * address), the connection's idle timeout (no stream for {@code idle_timeout} → GOAWAY and close),
 * drain (GOAWAY NO_ERROR; streams in flight finish, then the connection closes), and the closed
 * counter. Connection-level frames the codec passes up (SETTINGS, PING, GOAWAY) are released here.
 */
final class H2Connection extends ChannelInboundHandlerAdapter {

    private static final int DEFAULT_WINDOW = 65_535;

    final HttpListenerContext lc;
    HttpUpstreamPool pool;
    Scheduler scheduler;
    private ChannelHandlerContext ctx;
    private ConnectionTimer idle;
    private int activeStreams;
    private long idleSince;
    private String clientIp;
    private byte[] clientAddress;
    private boolean closed;
    private boolean unwritable;
    private long hardCloseAt;
    private long unwritableSince;
    private io.sluice.server.tls.TlsRequests tls;
    private boolean tlsKnown;

    H2Connection(HttpListenerContext lc) {
        this.lc = lc;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.pool = lc.pool(ctx.executor());
        this.scheduler = lc.scheduler(ctx.executor());
        this.idle = new ConnectionTimer(scheduler, this::onIdleTimer);
        if (ctx.channel().remoteAddress() instanceof InetSocketAddress a && a.getAddress() != null) {
            clientIp = a.getAddress().getHostAddress();
            clientAddress = a.getAddress().getAddress();
        }
        idleSince = idle.now();
        idle.arm(idleSince + lc.options().idleTimeout().toNanos());
        lc.metrics().http2ConnectionOpened();
        int window = lc.options().http2().connectionWindowSize();
        if (window > DEFAULT_WINDOW) { // the connection window grows by a WINDOW_UPDATE on stream 0
            ctx.writeAndFlush(new DefaultHttp2WindowUpdateFrame(window - DEFAULT_WINDOW), ctx.voidPromise());
        }
        if (lc.draining()) {
            ctx.channel().close();
        }
    }

    String clientIp() {
        return clientIp;
    }

    /** The connection's TLS request rules (identity header, X-Forwarded-Proto https), null in clear text. */
    io.sluice.server.tls.TlsRequests tls() {
        if (!tlsKnown) { // after the handshake: HTTP/2 starts only once TLS carries bytes
            tls = io.sluice.server.tls.TlsRequests.of(ctx.channel());
            tlsKnown = true;
        }
        return tls;
    }

    boolean trusted(HttpOptions o) {
        return clientAddress != null && o.trusts(clientAddress);
    }

    void streamStarted() {
        lc.metrics().http2StreamStarted();
        activeStreams++;
    }

    void streamEnded() {
        if (--activeStreams == 0 && !closed) {
            idleSince = idle.now();
            idle.arm(idleSince + lc.options().idleTimeout().toNanos());
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        boolean writable = ctx.channel().isWritable();
        if (!writable && !unwritable && !closed) {
            unwritable = true;
            unwritableSince = idle.now();
            idle.arm(unwritableSince + lc.options().writeTimeout().toNanos());
        } else if (writable) {
            unwritable = false;
        }
        ctx.fireChannelWritabilityChanged();
    }

    /**
     * The codec sent GOAWAY with an error (a limit or a protocol error): the socket closes once it
     * is written, or after {@code write_timeout} if the client does not read it (a flood's sender
     * rarely does), so an attacker cannot hold the connection open.
     */
    void onGoAwaySent(long errorCode) {
        if (errorCode != 0 && !closed && hardCloseAt == 0) {
            lc.metrics().http2GoAwayError();
            hardCloseAt = idle.now() + lc.options().writeTimeout().toNanos();
            idle.arm(hardCloseAt);
            ctx.channel().config().setAutoRead(false); // read no more of what a misbehaving client sends
        }
    }

    private void onIdleTimer() {
        if (closed) {
            return;
        }
        if (hardCloseAt != 0) {
            if (idle.now() - hardCloseAt >= 0) {
                closed = true;
                ctx.pipeline().firstContext().close();
                return;
            }
            idle.arm(hardCloseAt);
        }
        if (unwritable) {
            long writeDue = unwritableSince + lc.options().writeTimeout().toNanos();
            if (idle.now() - writeDue >= 0) {
                // The client reads nothing (a zero window on the whole connection, or a flood of
                // frames it makes us answer): a GOAWAY could never be written, so close the socket.
                lc.metrics().writeTimedOut();
                closed = true;
                ctx.pipeline().firstContext().close();
                return;
            }
            idle.arm(writeDue);
        }
        long due = idleSince + lc.options().idleTimeout().toNanos();
        if (activeStreams == 0 && idle.now() - due >= 0) {
            ctx.channel().close(); // GOAWAY NO_ERROR, then close
            return;
        }
        idle.arm(activeStreams == 0 ? due : idle.now() + lc.options().idleTimeout().toNanos());
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof Http2GoAwayFrame) {
            // the client goes away: streams it started finish, it starts no more
        }
        ReferenceCountUtil.release(msg);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == DrainEvent.INSTANCE) {
            // GOAWAY(last stream, NO_ERROR); the codec closes once the streams in flight are done
            ctx.channel().close();
            return;
        }
        ReferenceCountUtil.release(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (Http2CodecUtil.getEmbeddedHttp2Exception(cause) != null) {
            return; // a protocol error: the codec answers it (GOAWAY with its code) and closes
        }
        ctx.close(); // I/O errors (resets)
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closed = true;
        idle.cancel();
        lc.metrics().connectionClosed();
    }
}
