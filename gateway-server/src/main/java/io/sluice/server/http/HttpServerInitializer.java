package io.sluice.server.http;

import io.netty.channel.Channel;
import io.netty.channel.group.ChannelGroup;
import io.sluice.codec.http.Http1Decoder;
import io.sluice.server.channel.ListenerInitializer;
import io.sluice.server.channel.SluicePipeline;
import io.sluice.server.http2.H2cPrefaceSniffer;
import io.sluice.server.http2.Http2Server;

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
        if (Http2Server.enabled(context)) { // HTTP/2 hook: the h2c preface is told apart on the first bytes
            ch.pipeline().addLast(SluicePipeline.H2C_SNIFFER, new H2cPrefaceSniffer(context));
        }
        ch.pipeline()
                .addLast(SluicePipeline.HTTP_READ_MARKER, new ReadMarkerHandler(proxy))
                .addLast(SluicePipeline.HTTP_DECODER, Http1Decoder.forRequests(HttpListenerContext.requestCodec(context.options())))
                .addLast(SluicePipeline.HTTP_PROXY, proxy);
    }
}
