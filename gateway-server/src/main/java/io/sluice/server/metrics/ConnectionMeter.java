package io.sluice.server.metrics;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;

import java.util.function.BooleanSupplier;

/**
 * First handler of a client connection ({@code meter} in every downstream pipeline of
 * {@link io.sluice.server.channel.SluicePipeline}, when metrics are recorded): counts the bytes read and written and, when the
 * connection ends, who closed it. Bytes add up in plain fields and go to the shared counters once
 * per read batch and once per flush, not per message. One instance per connection, event loop only.
 */
final class ConnectionMeter extends ChannelDuplexHandler {

    private final ListenerMetrics metrics;
    private long in;
    private long out;
    private ListenerMetrics.CloseReason reason;

    private final BooleanSupplier draining;

    ConnectionMeter(ListenerMetrics metrics, BooleanSupplier draining) {
        this.metrics = metrics;
        this.draining = draining;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf b) {
            in += b.readableBytes();
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        flushIn();
        ctx.fireChannelReadComplete();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof ByteBuf b) {
            out += b.readableBytes();
        } else if (msg instanceof ByteBufHolder h) {
            out += h.content().readableBytes();
        }
        ctx.write(msg, promise);
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        flushOut();
        ctx.flush();
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        if (reason == null) {
            reason = draining.getAsBoolean() ? ListenerMetrics.CloseReason.DRAIN : ListenerMetrics.CloseReason.LOCAL;
        }
        ctx.close(promise);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (reason == null) {
            reason = ListenerMetrics.CloseReason.ERROR;
        }
        ctx.fireExceptionCaught(cause);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        flushIn();
        flushOut();
        metrics.connectionClosed(reason == null ? ListenerMetrics.CloseReason.REMOTE : reason);
        ctx.fireChannelInactive();
    }

    private void flushIn() {
        if (in != 0) {
            metrics.bytesIn.increment(in);
            in = 0;
        }
    }

    private void flushOut() {
        if (out != 0) {
            metrics.bytesOut.increment(out);
            out = 0;
        }
    }
}
