package io.sluice.server.testing;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A real WebSocket server for tests, built from Netty's WebSocket codec, on its own NIO loop, at
 * path {@code /ws}. It echoes every data frame as it came (text, binary, continuation: fragments
 * stay fragments); ping and close are answered by the codec (pong with the same data; the close
 * echoed with its code). A text message {@code flood:N} makes it send N bytes in 64 KiB binary
 * frames as fast as its connection lets it write ({@link #flushed()} counts what left it). A
 * request without {@code Upgrade} is answered {@code 200 plain}. The headers of the last request
 * are kept ({@link #lastHeaders()}, names lower case).
 */
public final class WebSocketBackend implements AutoCloseable {

    private static final int FLOOD_FRAME = 64 * 1024;
    private static final byte[] PATTERN = new byte[FLOOD_FRAME];

    static {
        for (int i = 0; i < PATTERN.length; i++) {
            PATTERN[i] = (byte) ('a' + i % 26);
        }
    }

    private final EventLoopGroup group;
    private final Channel server;
    private final AtomicReference<Map<String, String>> lastHeaders = new AtomicReference<>();
    private final AtomicLong flushed = new AtomicLong();

    private WebSocketBackend() throws InterruptedException {
        this.group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        WebSocketServerProtocolConfig ws = WebSocketServerProtocolConfig.newBuilder().websocketPath("/ws")
                .maxFramePayloadLength(1 << 20).handleCloseFrames(true).dropPongFrames(true).build();
        this.server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(65536), new HandshakeTap(),
                                new WebSocketServerProtocolHandler(ws), new Echo());
                    }
                }).bind("127.0.0.1", 0).sync().channel();
    }

    public static WebSocketBackend start() throws InterruptedException {
        return new WebSocketBackend();
    }

    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    /** The headers of the last request received (lower-case names, repeated ones joined by ", "), or null. */
    public Map<String, String> lastHeaders() {
        return lastHeaders.get();
    }

    /** Bytes of flood frames written out (flushed to the socket) so far. */
    public long flushed() {
        return flushed.get();
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** Keeps the request's headers; answers a request that asks for no upgrade itself. */
    private final class HandshakeTap extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof FullHttpRequest req) {
                Map<String, String> h = new TreeMap<>();
                req.headers().forEach(e -> h.merge(e.getKey().toLowerCase(java.util.Locale.ROOT), e.getValue(), (a, b) -> a + ", " + b));
                lastHeaders.set(h);
                if (!req.headers().contains(HttpHeaderNames.UPGRADE)) {
                    req.release();
                    FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                            ctx.alloc().buffer().writeBytes("plain".getBytes(StandardCharsets.US_ASCII)));
                    r.headers().set(HttpHeaderNames.CONTENT_LENGTH, 5);
                    ctx.writeAndFlush(r);
                    return;
                }
            }
            ctx.fireChannelRead(msg);
        }
    }

    private final class Echo extends ChannelInboundHandlerAdapter {
        private long floodLeft;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof TextWebSocketFrame t && t.isFinalFragment() && t.text().startsWith("flood:")) {
                floodLeft = Long.parseLong(t.text().substring(6));
                t.release();
                flood(ctx);
                return;
            }
            if (msg instanceof WebSocketFrame f) {
                ctx.writeAndFlush(f); // echo as it came, fragments included
                return;
            }
            io.netty.util.ReferenceCountUtil.release(msg);
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            flood(ctx);
            ctx.fireChannelWritabilityChanged();
        }

        private void flood(ChannelHandlerContext ctx) {
            while (floodLeft > 0 && ctx.channel().isWritable()) {
                int n = (int) Math.min(FLOOD_FRAME, floodLeft);
                floodLeft -= n;
                ByteBuf b = ctx.alloc().buffer(n).writeBytes(PATTERN, 0, n); // one call: leak tracking records per call
                ctx.writeAndFlush(new BinaryWebSocketFrame(b)).addListener((ChannelFutureListener) f -> {
                    if (f.isSuccess()) {
                        flushed.addAndGet(n);
                        // go on once the socket took it (the write's bytes are counted off after its listeners run)
                        ctx.executor().execute(() -> flood(ctx));
                    }
                });
            }
        }
    }
}
