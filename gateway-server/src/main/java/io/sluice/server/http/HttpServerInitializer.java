package io.sluice.server.http;

import io.netty.channel.ChannelInitializer;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.sluice.codec.http.Http1Decoder;
import io.sluice.core.config.HttpOptions;

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
    public void configure(io.netty.channel.Channel ch, boolean meter) {
        HttpOptions o = context.options();
        HttpProxyHandler proxy = new HttpProxyHandler(context);
        io.netty.channel.ChannelHandler m = meter ? context.metrics().newConnectionHandler(context::draining) : null;
        if (m != null) {
            ch.pipeline().addLast("meter", m);
        }
        ch.pipeline()
                .addLast("read-marker", new ReadMarkerHandler(proxy))
                .addLast(HttpPipeline.SERVER_CODEC, Http1Decoder.forRequests(HttpListenerContext.requestCodec(o)))
                .addLast(HttpPipeline.PROXY, proxy);
    }
}
