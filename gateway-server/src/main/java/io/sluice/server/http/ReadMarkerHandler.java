package io.sluice.server.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * Downstream HTTP pipeline, {@link io.sluice.server.channel.SluicePipeline#HTTP_READ_MARKER}: the
 * first HTTP handler (after the meter), before the request {@code Http1Decoder}. Tells the proxy
 * handler that raw bytes arrived, so it can time the reading of a request head (slowloris) and
 * the keep-alive idle period without an extra timer per request.
 */
final class ReadMarkerHandler extends ChannelInboundHandlerAdapter {

    private final HttpProxyHandler proxy;

    ReadMarkerHandler(HttpProxyHandler proxy) {
        this.proxy = proxy;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        proxy.onBytes();
        ctx.fireChannelRead(msg);
    }
}
