package io.sluice.bench.ws;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.util.ReferenceCountUtil;
import io.sluice.bench.LoadSupport;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.transport.Transport;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * A WebSocket echo server for the WebSocket benchmark ({@code ws-echo --port N}): Netty's HTTP
 * server codec and WebSocket server protocol handler (RFC 6455 handshake on {@code --path}, default
 * {@code /ws}; pings answered, close frames handled), and every text or binary message written
 * back as it came, flushed once per read batch. nginx cannot echo WebSocket messages, so the kit
 * brings this backend; the script pins it to the backend's CPU. UTF-8 validation of text frames is
 * off (the bytes go back unchanged; a load generator's CPU shares the core).
 */
public final class WsEcho implements AutoCloseable {

    private final EventLoopGroup group;
    private final Channel server;

    private WsEcho(EventLoopGroup group, Channel server) {
        this.group = group;
        this.server = server;
    }

    /** Starts an echo server on {@code host:port} (0 = any free port) with {@code threads} event loops. */
    public static WsEcho start(String host, int port, String path, int threads) throws InterruptedException {
        Transport transport = Transport.select(TransportConfig.defaults());
        EventLoopGroup group = transport.newGroup(threads, "ws-echo");
        WebSocketServerProtocolConfig cfg = WebSocketServerProtocolConfig.newBuilder()
                .websocketPath(path)
                .checkStartsWith(false)
                .handleCloseFrames(true)
                .dropPongFrames(true)
                .decoderConfig(WebSocketDecoderConfig.newBuilder()
                        .maxFramePayloadLength(1 << 20)
                        .withUTF8Validator(false)
                        .build())
                .build();
        ChannelHandler echo = new Echo();
        try {
            Channel ch = new ServerBootstrap().group(group).channel(transport.serverChannel())
                    .option(ChannelOption.SO_BACKLOG, 4096)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childOption(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                    .childHandler(new ChannelInitializer<Channel>() {
                        @Override
                        protected void initChannel(Channel c) {
                            c.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(8192),
                                    new WebSocketServerProtocolHandler(cfg), echo);
                        }
                    })
                    .bind(host, port).sync().channel();
            return new WsEcho(group, ch);
        } catch (RuntimeException | InterruptedException e) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw e;
        }
    }

    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    @Override
    public void close() throws InterruptedException {
        server.close().sync();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    /** {@code ws-echo --port N [--host 127.0.0.1] [--path /ws] [--threads 1]}: runs until killed. */
    public static void main(String[] args) throws InterruptedException {
        String host = "127.0.0.1";
        int port = -1;
        String path = "/ws";
        int threads = 1;
        try {
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "--port" -> port = Integer.parseInt(LoadSupport.value(args, ++i, a));
                    case "--host" -> host = LoadSupport.value(args, ++i, a);
                    case "--path" -> path = LoadSupport.value(args, ++i, a);
                    case "--threads" -> threads = Integer.parseInt(LoadSupport.value(args, ++i, a));
                    default -> throw new IllegalArgumentException("unknown option " + a);
                }
            }
            if (port < 0 || threads < 1) {
                throw new IllegalArgumentException("need --port N (and --threads >= 1)");
            }
        } catch (IllegalArgumentException e) {
            System.err.println("ws-echo: " + e.getMessage());
            System.err.println("usage: ws-echo --port N [--host 127.0.0.1] [--path /ws] [--threads 1]");
            System.exit(2);
            return;
        }
        WsEcho echo = start(host, port, path, threads);
        System.out.println("ws-echo listening on " + host + ":" + echo.port() + path);
        echo.server.closeFuture().sync();
    }

    /** Writes every data frame back; one flush per read batch. */
    @ChannelHandler.Sharable
    private static final class Echo extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof BinaryWebSocketFrame || msg instanceof TextWebSocketFrame) {
                ctx.write(msg, ctx.voidPromise()); // the frame (and its buffer) goes back out: the encoder releases it
            } else {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
