package io.sluice.server.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.sluice.codec.http.Http1Decoder;
import io.sluice.core.config.HttpOptions;
import io.sluice.server.channel.SluicePipeline;

/**
 * Builds a downstream HTTP/1.1 pipeline: {@code read-marker → http1-decoder → http-proxy}.
 * Shared by all connections of a listener; each connection gets fresh handlers.
 */
public final class HttpServerInitializer extends ChannelInitializer<SocketChannel> {

    private final HttpListenerContext context;
    private final ChannelGroup channels;

    public HttpServerInitializer(HttpListenerContext context, ChannelGroup channels) {
        this.context = context;
        this.channels = channels;
    }

    @Override
    protected void initChannel(SocketChannel ch) {
        channels.add(ch);
        configure(ch, true);
    }

    /**
     * Appends the HTTP handlers to {@code ch}'s pipeline ({@code meter}: with the connection meter
     * first; a listener that detects the protocol has added that already).
     */
    public void configure(Channel ch, boolean meter) {
        HttpOptions o = context.options();
        HttpProxyHandler proxy = new HttpProxyHandler(context);
        ChannelHandler m = meter ? context.metrics().newConnectionHandler(context::draining) : null;
        if (m != null) {
            ch.pipeline().addLast(SluicePipeline.METER, m);
        }
        ch.pipeline()
                .addLast(SluicePipeline.HTTP_READ_MARKER, new ReadMarkerHandler(proxy))
                .addLast(SluicePipeline.HTTP_DECODER, Http1Decoder.forRequests(HttpListenerContext.requestCodec(o)))
                .addLast(SluicePipeline.HTTP_PROXY, proxy);
    }
}
