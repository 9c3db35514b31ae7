package io.sluice.server.testing;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
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
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SniCompletionEvent;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.concurrent.GlobalEventExecutor;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real HTTPS/1.1 upstream for tests (Netty's own server-side {@link SslHandler} on its own NIO
 * loop): answers every request {@code 200 tls ok from PORT client=<subject or none>}, keeps
 * connections alive, and counts successful and failed TLS handshakes and the SNI names it saw.
 * With a client CA it requires a client certificate signed by it (mTLS).
 */
public final class TlsHttpServer implements AutoCloseable {

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final Channel server;
    private final AtomicInteger handshakes = new AtomicInteger();
    private final AtomicInteger failedHandshakes = new AtomicInteger();
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicInteger resumed = new AtomicInteger();
    private final java.util.Set<String> sessionIds = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final List<String> sniNames = new CopyOnWriteArrayList<>();
    private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);

    private TlsHttpServer(SslContext ctx, int port) throws InterruptedException {
        TlsHttpServer self = this;
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        connections.add(ch);
                        SslHandler ssl = ctx.newHandler(ch.alloc());
                        ch.pipeline().addLast(ssl, new HttpServerCodec(), new HttpObjectAggregator(1 << 20), new Handler(self, ssl));
                    }
                }).bind("127.0.0.1", port).sync().channel();
    }

    /** Serves {@code leaf}; {@code clientCa} non-null requires client certificates it signed. */
    public static TlsHttpServer start(TestPki.Leaf leaf, Path clientCa) throws Exception {
        return start(leaf, clientCa, 0);
    }

    public static TlsHttpServer start(TestPki.Leaf leaf, Path clientCa, int port) throws Exception {
        SslContextBuilder b = SslContextBuilder.forServer(leaf.certFile().toFile(), leaf.keyFile().toFile());
        if (clientCa != null) {
            b.trustManager(clientCa.toFile()).clientAuth(ClientAuth.REQUIRE);
        }
        return new TlsHttpServer(b.build(), port);
    }

    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    public int handshakes() {
        return handshakes.get();
    }

    public int failedHandshakes() {
        return failedHandshakes.get();
    }

    /** Handshakes that resumed a session seen before (same session id: TLS 1.2 session cache). */
    public int resumedHandshakes() {
        return resumed.get();
    }

    public int requests() {
        return requests.get();
    }

    public List<String> sniNames() {
        return sniNames;
    }

    /** Closes every accepted connection (the gateway's pooled ones among them). */
    public void closeConnections() {
        connections.close().syncUninterruptibly();
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private static final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
        private final TlsHttpServer server;
        private final SslHandler ssl;

        Handler(TlsHttpServer server, SslHandler ssl) {
            this.server = server;
            this.ssl = ssl;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt instanceof SslHandshakeCompletionEvent e) {
                (e.isSuccess() ? server.handshakes : server.failedHandshakes).incrementAndGet();
                if (e.isSuccess()) {
                    byte[] id = ssl.engine().getSession().getId();
                    if (id != null && id.length > 0 && !server.sessionIds.add(java.util.HexFormat.of().formatHex(id))) {
                        server.resumed.incrementAndGet();
                    }
                }
                if (e.isSuccess() && ssl.engine().getSession() instanceof javax.net.ssl.ExtendedSSLSession s) {
                    s.getRequestedServerNames().forEach(n -> server.sniNames.add(
                            new String(n.getEncoded(), StandardCharsets.US_ASCII)));
                }
            } else if (evt instanceof SniCompletionEvent) {
                return;
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
            server.requests.incrementAndGet();
            String client = "none";
            try {
                client = ((X509Certificate) ssl.engine().getSession().getPeerCertificates()[0]).getSubjectX500Principal().getName();
            } catch (Exception e) {
                // no client certificate
            }
            byte[] body = ("tls ok from " + server.port() + " client=" + client).getBytes(StandardCharsets.UTF_8);
            ByteBuf content = ctx.alloc().buffer(body.length).writeBytes(body);
            FullHttpResponse resp = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, content);
            resp.headers().set(HttpHeaderNames.CONTENT_LENGTH, body.length).set(HttpHeaderNames.CONTENT_TYPE, "text/plain");
            boolean keep = HttpUtil.isKeepAlive(req);
            if (keep) {
                ctx.writeAndFlush(resp);
            } else {
                ctx.writeAndFlush(resp).addListener(ChannelFutureListener.CLOSE);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
