package io.sluice.server.http2;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.sluice.server.channel.SluicePipeline;
import io.sluice.server.http.HttpListenerContext;

/**
 * {@code h2c-sniffer}, first in a downstream HTTP/1.1 pipeline whose listener accepts HTTP/2 (after
 * the meter): looks at the connection's first bytes. The HTTP/2 connection preface
 * ({@code PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n}, RFC 9113 §3.4) swaps the HTTP/1.1 handlers for the
 * HTTP/2 ones ({@link Http2Server#install}); anything else (the first byte that differs from the
 * preface: {@code G}, {@code PO}, {@code PU}…) leaves HTTP/1.1 in place. Either way it removes
 * itself, handing on what it read, so an HTTP/1.1 connection pays for it once, never per request.
 */
public final class H2cPrefaceSniffer extends ChannelInboundHandlerAdapter {

    /** The ALPN id of HTTP/2 over TLS. */
    public static final String ALPN_H2 = "h2";
    private static final ByteBuf PREFACE = Http2CodecUtil.connectionPrefaceBuf();
    private final HttpListenerContext lc;
    /** Bytes that matched the preface so far, while fewer than its 24 have arrived. */
    private ByteBuf held;

    public H2cPrefaceSniffer(HttpListenerContext lc) {
        this.lc = lc;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf in)) {
            ctx.fireChannelRead(msg);
            return;
        }
        ByteBuf buf = in;
        if (held != null) {
            buf = ctx.alloc().buffer(held.readableBytes() + in.readableBytes()).writeBytes(held).writeBytes(in);
            held.release();
            held = null;
            in.release();
        }
        int n = Math.min(buf.readableBytes(), PREFACE.readableBytes());
        boolean match = true;
        for (int i = 0; i < n; i++) {
            if (buf.getByte(buf.readerIndex() + i) != PREFACE.getByte(i)) {
                match = false;
                break;
            }
        }
        if (match && n < PREFACE.readableBytes()) {
            held = buf; // part of the preface: wait for the rest
            return;
        }
        if (match) {
            Http2Server.install(ctx.channel(), lc);
        }
        ctx.pipeline().remove(this);
        ctx.fireChannelRead(buf);
    }

    /**
     * TLS: a handshake that negotiated ALPN {@code h2} makes the connection HTTP/2 at once (the
     * client's first bytes are then the preface, read by the frame codec); any other outcome leaves
     * the sniffer to tell the first bytes apart as in clear text.
     */
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof SslHandshakeCompletionEvent e && e.isSuccess() && held == null) {
            SslHandler ssl = ctx.pipeline().get(SslHandler.class);
            if (ssl != null && ALPN_H2.equals(ssl.applicationProtocol())) {
                ctx.fireUserEventTriggered(evt);
                if (ctx.pipeline().get(SluicePipeline.H2C_SNIFFER) == this) {
                    Http2Server.install(ctx.channel(), lc);
                    ctx.pipeline().remove(this);
                }
                return;
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (held != null) {
            held.release();
            held = null;
        }
    }

    /** The handler name in the pipeline. */
    public static String name() {
        return SluicePipeline.H2C_SNIFFER;
    }
}
