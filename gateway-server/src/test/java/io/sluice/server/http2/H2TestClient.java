package io.sluice.server.http2;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.handler.codec.http2.Http2StreamFrame;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.util.ReferenceCountUtil;
import io.sluice.codec.testing.Bufs;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A real HTTP/2 client for tests: Netty's frame codec and multiplex handler with prior knowledge
 * (cleartext), one child channel per request. Collects the response head, body, trailers and any
 * RST_STREAM.
 */
final class H2TestClient implements AutoCloseable {

    /** What came back on one stream. */
    static final class Response {
        Http2Headers headers;
        Http2Headers trailers;
        final ByteArrayOutputStream body = new ByteArrayOutputStream();
        Http2Error reset;
        Throwable writeFailure;
        /** The status of an interim (1xx) response, 0 when none came. */
        int interim;
        final CompletableFuture<Response> done = new CompletableFuture<>();

        int status() {
            return Integer.parseInt(headers.status().toString());
        }

        String bodyText() {
            return body.toString(StandardCharsets.UTF_8);
        }

        String header(String name) {
            CharSequence v = headers.get(name);
            return v == null ? null : v.toString();
        }
    }

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    final Channel channel;
    final CompletableFuture<Http2GoAwayFrame> goAway = new CompletableFuture<>();

    H2TestClient(int port) throws InterruptedException {
        channel = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(io.netty.channel.ChannelOption.ALLOCATOR, Bufs.ALLOC)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(Http2FrameCodecBuilder.forClient().build(),
                                new Http2MultiplexHandler(new SimpleChannelInboundHandler<Object>() {
                                    @Override
                                    protected void channelRead0(ChannelHandlerContext ctx, Object msg) {
                                    }
                                }), new SimpleChannelInboundHandler<Object>() {
                                    @Override
                                    protected void channelRead0(ChannelHandlerContext ctx, Object msg) {
                                        if (msg instanceof Http2GoAwayFrame g) {
                                            goAway.complete(g.retain());
                                        }
                                    }
                                });
                    }
                }).connect("127.0.0.1", port).sync().channel();
    }

    static Http2Headers get(String path) {
        return new DefaultHttp2Headers().method("GET").scheme("http").authority("localhost").path(path);
    }

    static Http2Headers post(String path) {
        return new DefaultHttp2Headers().method("POST").scheme("http").authority("localhost").path(path);
    }

    /** Opens a stream and sends the headers without ending the request (no body follows). */
    Http2StreamChannel sendOpen(Http2Headers headers, Response r) throws InterruptedException {
        return send(headers, null, r, false);
    }

    /** Opens a stream and sends the headers (and the body, when not null, in one DATA frame). */
    Http2StreamChannel send(Http2Headers headers, byte[] body, Response r) throws InterruptedException {
        return send(headers, body, r, body == null);
    }

    private Http2StreamChannel send(Http2Headers headers, byte[] body, Response r, boolean endWithHeaders) throws InterruptedException {
        Http2StreamChannel s = new Http2StreamChannelBootstrap(channel).handler(new SimpleChannelInboundHandler<Http2StreamFrame>() {
            @Override
            protected void channelRead0(ChannelHandlerContext ctx, Http2StreamFrame f) {
                if (f instanceof Http2HeadersFrame h) {
                    if (r.headers == null || r.headers.status() != null && r.headers.status().charAt(0) == '1') {
                        if (r.headers != null) {
                            r.interim = Integer.parseInt(r.headers.status().toString());
                        }
                        r.headers = h.headers();
                    } else {
                        r.trailers = h.headers();
                    }
                    if (h.isEndStream()) {
                        r.done.complete(r);
                    }
                } else if (f instanceof Http2DataFrame d) {
                    ByteBuf c = d.content();
                    byte[] b = new byte[c.readableBytes()];
                    c.readBytes(b);
                    r.body.writeBytes(b);
                    if (d.isEndStream()) {
                        r.done.complete(r);
                    }
                } else if (f instanceof Http2ResetFrame rst) {
                    r.reset = Http2Error.valueOf(rst.errorCode());
                    r.done.complete(r);
                }
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                r.done.complete(r);
            }
        }).open().sync().getNow();
        s.write(new DefaultHttp2HeadersFrame(headers, endWithHeaders)).addListener(f -> {
            if (!f.isSuccess()) {
                r.writeFailure = f.cause();
            }
        });
        if (body != null) {
            s.write(new DefaultHttp2DataFrame(Bufs.copied(body), true));
        }
        s.flush();
        return s;
    }

    Response exchange(Http2Headers headers, byte[] body) throws Exception {
        Response r = new Response();
        send(headers, body, r);
        return r.done.get(10, TimeUnit.SECONDS);
    }

    static void reset(Http2StreamChannel s) {
        s.writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.CANCEL));
    }

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
        goAway.thenAccept(ReferenceCountUtil::release);
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
