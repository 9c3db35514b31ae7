package io.sluice.server.channel;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.ReferenceCountUtil;
import io.sluice.core.time.Scheduler;

import java.util.concurrent.TimeUnit;

/**
 * Lingering close (like nginx's {@code lingering_close}): after the gateway's last answer on a
 * connection it is closing — an error answer to a request it did not read to the end — the
 * output is shut down (half-close: the client reads the answer, then end-of-stream) and what the
 * client still sends is read and discarded, for at most {@link #MAX_NANOS} or {@link #MAX_BYTES},
 * before the connection closes. Closing a socket with unread data at once makes the kernel send a
 * reset, which can destroy the answer before the client has read it.
 *
 * <p>Pipeline: {@link SluicePipeline#LINGER}, inserted right after the meter (or first) when the
 * lingering starts; it swallows every read, so the protocol's decoder sees nothing more. The
 * bound runs on the listener's {@link Scheduler} (a {@link ConnectionTimer}). The client closing
 * its side ends it too.
 */
public final class LingeringCloseHandler extends ChannelInboundHandlerAdapter {

    /** The longest a closing connection lingers. */
    public static final long MAX_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** The most a closing connection reads and discards. */
    public static final long MAX_BYTES = 64 * 1024;

    private final ConnectionTimer timer;
    private ChannelHandlerContext ctx;
    private long discarded;

    private LingeringCloseHandler(Scheduler scheduler) {
        this.timer = new ConnectionTimer(scheduler, this::onTimeout);
    }

    /**
     * Flushes what was written to {@code ch}, then half-closes it and lingers (or closes it at once
     * if the flush failed or the channel cannot half-close: then there is nobody to linger for).
     */
    public static void closeAfterFlush(Channel ch, Scheduler scheduler) {
        ch.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener((ChannelFutureListener) f -> {
            Channel c = f.channel();
            if (!f.isSuccess() || !c.isActive() || !(c instanceof DuplexChannel)) {
                c.close(); // nobody to linger for, or no way to half-close (e.g. an embedded test channel)
                return;
            }
            linger(c, scheduler);
        });
    }

    /** Starts lingering on {@code ch} (its output flushed; half-closed if it can be): see the class comment. */
    static void linger(Channel ch, Scheduler scheduler) {
        LingeringCloseHandler h = new LingeringCloseHandler(scheduler);
        ChannelPipeline p = ch.pipeline();
        if (p.get(SluicePipeline.METER) != null) {
            p.addAfter(SluicePipeline.METER, SluicePipeline.LINGER, h);
        } else {
            p.addFirst(SluicePipeline.LINGER, h);
        }
        if (ch instanceof DuplexChannel d) {
            d.shutdownOutput();
        }
        ch.config().setAutoRead(true);
        ch.read();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        timer.armIn(MAX_NANOS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf b) {
            discarded += b.readableBytes();
        }
        ReferenceCountUtil.release(msg);
        if (discarded > MAX_BYTES) {
            ctx.close();
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        // swallowed: the handlers after this one are done
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        ReferenceCountUtil.release(evt); // the connection is closing: drain and the like change nothing
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        timer.cancel();
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close(); // a reset while lingering: nothing more to do
    }

    private void onTimeout() {
        ctx.close();
    }

    /** Bytes read and discarded so far (tests). */
    long discarded() {
        return discarded;
    }
}
