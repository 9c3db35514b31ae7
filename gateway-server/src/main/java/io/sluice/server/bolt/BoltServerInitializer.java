package io.sluice.server.bolt;

import io.netty.channel.Channel;
import io.netty.channel.group.ChannelGroup;
import io.sluice.codec.bolt.BoltFrameDecoder;
import io.sluice.server.channel.ListenerInitializer;
import io.sluice.server.channel.SluicePipeline;

/**
 * Builds a downstream Bolt pipeline: {@code [meter →] bolt-decoder → bolt-proxy}
 * ({@link SluicePipeline}). Frames are written as their bytes (no encoder). The proxy handler
 * tracks idleness itself (see {@link BoltProxyHandler}): Netty's {@code IdleStateHandler} would
 * turn every write's void promise into a real one with a listener.
 */
public final class BoltServerInitializer extends ListenerInitializer {

    private final BoltListenerContext context;

    public BoltServerInitializer(BoltListenerContext context, ChannelGroup channels) {
        super(context, channels);
        this.context = context;
    }

    @Override
    public void configure(Channel ch) {
        ch.pipeline()
                .addLast(SluicePipeline.BOLT_DECODER, new BoltFrameDecoder(context.options().maxFrameLength()))
                .addLast(SluicePipeline.BOLT_PROXY, new BoltProxyHandler(context));
    }
}
