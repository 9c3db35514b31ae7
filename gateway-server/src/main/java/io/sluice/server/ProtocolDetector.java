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
import io.sluice.server.channel.SluicePipeline;
import io.sluice.server.tls.DownstreamTls;

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
    /** Auto listeners with TLS: a ClientHello (0x16) goes through TLS first; null = cleartext only. */
    private DownstreamTls tls;

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

    /** TLS record type of a handshake message: the first byte of a ClientHello. */
    static final byte TLS_HANDSHAKE = 0x16;

    /**
     * Makes a ClientHello (first byte 0x16) start TLS, with another detector inside it for the
     * HTTP or Bolt that follows; other first bytes are served in cleartext only when the listener's
     * {@code tls.allow_plaintext} is on (closed otherwise). Null: no TLS.
     */
    ProtocolDetector tls(DownstreamTls tls) {
        this.tls = tls;
        return this;
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
        byte first = in.getByte(in.readerIndex());
        if (tls != null) {
            if (first == TLS_HANDSHAKE) {
                tls.addHandlers(ctx.pipeline(), ctx.name());
                ctx.pipeline().addLast(SluicePipeline.TLS_PROTOCOL_DETECTOR, new ProtocolDetector(http, bolt, timeoutNanos,
                        draining, metrics, schedulers));
                hand(ctx);
                return;
            }
            if (!tls.current().config().allowPlaintext()) {
                in.skipBytes(in.readableBytes());
                ctx.close(); // cleartext on a TLS-only listener: counted opened and closed at channelInactive
                return;
            }
        }
        (isBolt(first) ? bolt : http).accept(ch);
        hand(ctx);
    }

    private void hand(ChannelHandlerContext ctx) {
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
