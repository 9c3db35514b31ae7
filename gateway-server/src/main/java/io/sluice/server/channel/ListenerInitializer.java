package io.sluice.server.channel;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.socket.SocketChannel;

/**
 * Builds the downstream pipeline of every connection accepted by one single-protocol listener:
 * adds the connection to the listener's group, the connection meter first
 * ({@link SluicePipeline#METER}, when metrics are recorded), then the protocol's handlers
 * ({@link #configure}). A listener that detects the protocol adds the meter itself and calls
 * {@link #configure} once the first byte is known. Shared by all connections of a listener; each
 * connection gets fresh handlers.
 */
public abstract class ListenerInitializer extends ChannelInitializer<SocketChannel> {

    private final ListenerContext<?> context;
    private final ChannelGroup channels;

    protected ListenerInitializer(ListenerContext<?> context, ChannelGroup channels) {
        this.context = context;
        this.channels = channels;
    }

    @Override
    protected final void initChannel(SocketChannel ch) {
        channels.add(ch);
        ChannelHandler meter = context.metrics().newConnectionHandler(context::draining);
        if (meter != null) {
            ch.pipeline().addLast(SluicePipeline.METER, meter);
        }
        configure(ch);
    }

    /** Appends the protocol's handlers to {@code ch}'s pipeline, in {@link SluicePipeline} order. */
    public abstract void configure(Channel ch);
}
