package io.sluice.server.http;

import io.netty.channel.Channel;
import io.netty.channel.group.ChannelGroup;
import io.sluice.codec.http.Http1Decoder;
import io.sluice.server.channel.ListenerInitializer;
import io.sluice.server.channel.SluicePipeline;

/**
 * Builds a downstream HTTP/1.1 pipeline:
 * {@code [meter →] http-read-marker → http-decoder → http-proxy} ({@link SluicePipeline}).
 */
public final class HttpServerInitializer extends ListenerInitializer {

    private final HttpListenerContext context;

    public HttpServerInitializer(HttpListenerContext context, ChannelGroup channels) {
        super(context, channels);
        this.context = context;
    }

    @Override
    public void configure(Channel ch) {
        HttpProxyHandler proxy = new HttpProxyHandler(context);
        ch.pipeline()
                .addLast(SluicePipeline.HTTP_READ_MARKER, new ReadMarkerHandler(proxy))
                .addLast(SluicePipeline.HTTP_DECODER, Http1Decoder.forRequests(HttpListenerContext.requestCodec(context.options())))
                .addLast(SluicePipeline.HTTP_PROXY, proxy);
    }
}
