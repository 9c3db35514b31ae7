package io.sluice.server.bolt;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.sluice.codec.bolt.BoltFrameDecoder;
import io.sluice.core.config.BoltOptions;
import io.sluice.server.channel.SluicePipeline;

/**
 * Builds a downstream Bolt pipeline:
 * {@code [meter →] bolt-frame-decoder → bolt-proxy}. Shared by all connections of a listener;
 * each connection gets fresh handlers. Frames are written as their bytes (no encoder). The proxy
 * handler tracks idleness itself (see {@link BoltProxyHandler}): Netty's {@code IdleStateHandler}
 * would turn every write's void promise into a real one with a listener.
 */
public final class BoltServerInitializer extends ChannelInitializer<SocketChannel> {

    private final BoltListenerContext context;
    private final ChannelGroup channels;

    public BoltServerInitializer(BoltListenerContext context, ChannelGroup channels) {
        this.context = context;
        this.channels = channels;
    }

    @Override
    protected void initChannel(SocketChannel ch) {
        channels.add(ch);
        configure(ch, true);
    }

    /**
     * Appends the Bolt handlers to {@code ch}'s pipeline ({@code meter}: with the connection meter
     * first; a listener that detects the protocol has added that already).
     */
    public void configure(Channel ch, boolean meter) {
        BoltOptions o = context.options();
        ChannelHandler m = meter ? context.metrics().newConnectionHandler(context::draining) : null;
        if (m != null) {
            ch.pipeline().addLast(SluicePipeline.METER, m);
        }
        ch.pipeline()
                .addLast(SluicePipeline.BOLT_DECODER, new BoltFrameDecoder(o.maxFrameLength()))
                .addLast(SluicePipeline.BOLT_PROXY, new BoltProxyHandler(context));
    }
}
