package io.sluice.server.demo;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.transport.Transport;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * A tiny real HTTP/1.1 server that answers every request with its own address, e.g.
 * {@code hello from demo backend 127.0.0.1:40123 (weight 2)}, and an {@code X-Backend-Port}
 * header. It backs the embedded default config and the slow-start demonstration. Request bodies
 * are read and discarded.
 */
public final class DemoHttpBackend implements AutoCloseable {

    private final EventLoopGroup group;
    private final boolean ownsGroup;
    private final Channel channel;
    private final String label;

    private DemoHttpBackend(EventLoopGroup group, boolean ownsGroup, Channel channel, String label) {
        this.group = group;
        this.ownsGroup = ownsGroup;
        this.channel = channel;
        this.label = label;
    }

    /** Starts a backend on {@code host:port} (0 = a free port) with its own single event loop. */
    public static DemoHttpBackend start(String host, int port, String label) throws InterruptedException {
        Transport t = Transport.select(TransportConfig.defaults());
        return start(t, t.newGroup(1, "sluice-demo"), true, host, port, label);
    }

    /** Starts a backend on the given group (not closed with the backend). */
    public static DemoHttpBackend start(Transport transport, EventLoopGroup group, String host, int port, String label)
            throws InterruptedException {
        return start(transport, group, false, host, port, label, null);
    }

    /**
     * Starts a backend on the given group (not closed with the backend) whose connections take their
     * buffers from {@code alloc} (the warm-up's own pool, released after it).
     */
    public static DemoHttpBackend start(Transport transport, EventLoopGroup group, String host, int port, String label,
                                        ByteBufAllocator alloc) throws InterruptedException {
        return start(transport, group, false, host, port, label, java.util.Objects.requireNonNull(alloc));
    }

    private static DemoHttpBackend start(Transport transport, EventLoopGroup group, boolean owns, String host, int port,
                                         String label) throws InterruptedException {
        return start(transport, group, owns, host, port, label, null);
    }

    private static DemoHttpBackend start(Transport transport, EventLoopGroup group, boolean owns, String host, int port,
                                         String label, ByteBufAllocator alloc) throws InterruptedException {
        ServerBootstrap b = new ServerBootstrap()
                .group(group)
                .channel(transport.serverChannel())
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true);
        if (alloc != null) {
            b.option(ChannelOption.ALLOCATOR, alloc).childOption(ChannelOption.ALLOCATOR, alloc);
        }
        Channel ch = b
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel c) {
                        c.pipeline().addLast(new HttpServerCodec(), new Responder(label));
                    }
                })
                .bind(host, port).sync().channel();
        return new DemoHttpBackend(group, owns, ch, label);
    }

    public int port() {
        return ((InetSocketAddress) channel.localAddress()).getPort();
    }

    public String label() {
        return label;
    }

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
        if (ownsGroup) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    private static final class Responder extends SimpleChannelInboundHandler<HttpObject> {
        private final String label;
        private boolean keepAlive;

        Responder(String label) {
            this.label = label;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
            if (msg instanceof HttpRequest req) {
                keepAlive = HttpUtil.isKeepAlive(req);
            }
            if (msg instanceof LastHttpContent) {
                int port = ((InetSocketAddress) ctx.channel().localAddress()).getPort();
                byte[] text = ("hello from demo backend 127.0.0.1:" + port + (label.isEmpty() ? "" : " (" + label + ")") + "\n")
                        .getBytes(StandardCharsets.US_ASCII);
                ByteBuf body = ctx.alloc().buffer(text.length).writeBytes(text);
                FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, body);
                r.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.TEXT_PLAIN)
                        .setInt(HttpHeaderNames.CONTENT_LENGTH, text.length)
                        .setInt("x-backend-port", port);
                if (!keepAlive) {
                    r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
                    ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
                } else {
                    ctx.writeAndFlush(r, ctx.voidPromise());
                }
            }
        }
    }
}
