package io.sluice.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.sluice.codec.bolt.BoltProtocol;
import io.sluice.server.http.DrainEvent;

import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * First handler of a connection to a listener with {@code "protocol": "auto"}: waits for the
 * client's first byte, appends the Bolt pipeline when it is a Bolt protocol code (1 or 2, never
 * the first byte of an HTTP request line) and the HTTP pipeline otherwise, tells the new handlers
 * the connection is active, and removes itself, handing them the bytes read so far (no copy: the
 * decoder's buffer is passed on). A client that sends nothing within {@code timeoutNanos}, or
 * while the listener drains, is closed.
 */
final class ProtocolDetector extends ByteToMessageDecoder {

    private final Consumer<Channel> http;
    private final Consumer<Channel> bolt;
    private final long timeoutNanos;
    private ScheduledFuture<?> timeout;

    ProtocolDetector(Consumer<Channel> http, Consumer<Channel> bolt, long timeoutNanos) {
        this.http = http;
        this.bolt = bolt;
        this.timeoutNanos = timeoutNanos;
    }

    /** True for the first byte of a Bolt frame (its protocol code). */
    static boolean isBolt(byte first) {
        return first == BoltProtocol.PROTOCOL_V1 || first == BoltProtocol.PROTOCOL_V2;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        if (timeoutNanos > 0) {
            timeout = ctx.executor().schedule(() -> {
                ctx.close();
            }, timeoutNanos, TimeUnit.NANOSECONDS);
        }
        super.channelActive(ctx);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (!in.isReadable()) {
            return;
        }
        cancelTimeout();
        Channel ch = ctx.channel();
        (isBolt(in.getByte(in.readerIndex())) ? bolt : http).accept(ch);
        ctx.fireChannelActive(); // the handlers just added start as on a fresh connection
        ctx.pipeline().remove(this); // hands them what was read (ByteToMessageDecoder passes its buffer on)
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt == DrainEvent.INSTANCE) {
            ctx.close(); // nothing in flight before the first byte
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        cancelTimeout();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        cancelTimeout();
        super.channelInactive(ctx);
    }

    private void cancelTimeout() {
        if (timeout != null) {
            timeout.cancel(false);
            timeout = null;
        }
    }
}
