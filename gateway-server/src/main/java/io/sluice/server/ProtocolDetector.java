package io.sluice.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.concurrent.EventExecutor;
import io.sluice.codec.bolt.BoltProtocol;
import io.sluice.core.time.Scheduler;
import io.sluice.server.metrics.ListenerMetrics;
import io.sluice.server.channel.ConnectionTimer;
import io.sluice.server.channel.DrainEvent;

import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Downstream pipeline of a listener with {@code "protocol": "auto"},
 * {@link io.sluice.server.channel.SluicePipeline#PROTOCOL_DETECTOR} (after the meter): waits for the
 * client's first byte, appends the Bolt pipeline when it is a Bolt protocol code (1 or 2, never
 * the first byte of an HTTP request line) and the HTTP pipeline otherwise, tells the new handlers
 * the connection is active, and removes itself, handing them the bytes read so far (no copy: the
 * decoder's buffer is passed on). A client that sends nothing within the silence timeout, or
 * while the listener drains, is closed. The proxy handlers count a connection as opened when they
 * start; one that closes before its first byte is counted here (opened and closed), so the
 * accepted and closed counters agree. The silence timeout runs on the listener's {@link Scheduler}
 * for the connection's event loop (a {@link ConnectionTimer}), so tests drive it on a fake clock.
 */
final class ProtocolDetector extends ByteToMessageDecoder {

    private final Consumer<Channel> http;
    private final Consumer<Channel> bolt;
    private final LongSupplier timeoutNanos;
    private final BooleanSupplier draining;
    private final ListenerMetrics metrics;
    private final Function<EventExecutor, Scheduler> schedulers;
    private ConnectionTimer timeout;
    private ChannelHandlerContext ctx;
    private boolean handedOver;

    /**
     * @param timeoutNanos read when the connection starts (a reload may change it); 0 = none
     * @param draining     true once the listener drains: a new connection is closed at once
     * @param schedulers   the listener's scheduler (and clock) for an event loop
     */
    ProtocolDetector(Consumer<Channel> http, Consumer<Channel> bolt, LongSupplier timeoutNanos, BooleanSupplier draining,
                     ListenerMetrics metrics, Function<EventExecutor, Scheduler> schedulers) {
        this.schedulers = schedulers;
        this.http = http;
        this.bolt = bolt;
        this.timeoutNanos = timeoutNanos;
        this.draining = draining;
        this.metrics = metrics;
    }

    /** True for the first byte of a Bolt frame (its protocol code). */
    static boolean isBolt(byte first) {
        return first == BoltProtocol.PROTOCOL_V1 || first == BoltProtocol.PROTOCOL_V2;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        if (draining.getAsBoolean()) { // accepted just before the socket closed: it missed the drain event
            ctx.close();
            return;
        }
        long t = timeoutNanos.getAsLong();
        if (t > 0) {
            this.ctx = ctx;
            timeout = new ConnectionTimer(schedulers.apply(ctx.executor()), this::onSilence);
            timeout.armIn(t);
        }
        super.channelActive(ctx);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (!in.isReadable()) {
            return;
        }
        Channel ch = ctx.channel();
        (isBolt(in.getByte(in.readerIndex())) ? bolt : http).accept(ch);
        handedOver = true;
        cancelTimeout();
        ctx.fireChannelActive(); // the handlers just added start as on a fresh connection
        ctx.pipeline().remove(this); // hands them what was read (ByteToMessageDecoder passes its buffer on)
    }

    /** A reset or read error before the first byte: close quietly (nothing is in flight). */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (handedOver) {
            ctx.fireExceptionCaught(cause);
        } else {
            ctx.close();
        }
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
        if (!handedOver) {
            metrics.connectionOpened();
            metrics.connectionClosed();
        }
        super.channelInactive(ctx);
    }

    /** No first byte within the silence timeout. */
    private void onSilence() {
        timeout = null;
        ctx.close();
    }

    private void cancelTimeout() {
        if (timeout != null) {
            timeout.cancel();
            timeout = null;
        }
    }
}
