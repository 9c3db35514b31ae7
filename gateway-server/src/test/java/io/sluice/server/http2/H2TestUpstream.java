package io.sluice.server.http2;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2PingFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.util.ReferenceCountUtil;
import io.sluice.codec.testing.Bufs;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real HTTP/2 server in clear text (Netty's frame codec, its own event loop) for the upstream
 * tests. Paths: {@code /hold...} is answered only after {@link #releaseHeld()}; {@code /goaway} on
 * the first connection makes it send GOAWAY with the last-stream-id just below that stream (which is
 * never processed); {@code /early} is answered at once, before the request ends; {@code /trailers}
 * ends with a trailer section ({@code grpc-status: 0}, {@code x-trailer: t}); anything else is
 * answered when the request ends, echoing its body. Every answer says {@code conn=<n> stream=<id>}
 * (then the body) and {@code x-seen-te}/{@code x-seen-authority} headers with what it got.
 */
final class H2TestUpstream implements AutoCloseable {

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final Channel server;
    final AtomicInteger connections = new AtomicInteger();
    final AtomicInteger pings = new AtomicInteger();
    final AtomicInteger active = new AtomicInteger();
    /** The most requests one connection had open at once. */
    final AtomicInteger maxActive = new AtomicInteger();
    final AtomicInteger resets = new AtomicInteger();
    final ConcurrentLinkedQueue<Http2Headers> requests = new ConcurrentLinkedQueue<>();
    volatile boolean ackPings = true;
    private final List<Runnable> held = new ArrayList<>();

    H2TestUpstream(long maxConcurrentStreams) throws InterruptedException {
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.ALLOCATOR, Bufs.ALLOC)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        Http2FrameCodec codec = Http2FrameCodecBuilder.forServer()
                                .initialSettings(Http2Settings.defaultSettings().maxConcurrentStreams(maxConcurrentStreams))
                                .autoAckPingFrame(false).build();
                        ch.pipeline().addLast(codec, new Conn(codec, connections.getAndIncrement()));
                    }
                }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
    }

    int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    /** Answers the streams held so far. */
    void releaseHeld() {
        group.next().execute(() -> {
            List<Runnable> all = new ArrayList<>(held);
            held.clear();
            all.forEach(Runnable::run);
        });
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
    }

    private final class Conn extends ChannelInboundHandlerAdapter {
        final Http2FrameCodec codec;
        final int index;
        final Map<Integer, ByteArrayOutputStream> bodies = new HashMap<>();
        final Map<Integer, Http2Headers> heads = new HashMap<>();
        boolean wentAway;

        Conn(Http2FrameCodec codec, int index) {
            this.codec = codec;
            this.index = index;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof Http2PingFrame p && !p.ack()) {
                    pings.incrementAndGet();
                    if (ackPings) {
                        ctx.writeAndFlush(new DefaultHttp2PingFrame(p.content(), true));
                    }
                } else if (msg instanceof Http2HeadersFrame h && h.headers().method() != null) {
                    int id = h.stream().id();
                    requests.add(h.headers());
                    active.incrementAndGet();
                    heads.put(id, h.headers());
                    maxActive.accumulateAndGet(heads.size(), Math::max); // streams open on this connection
                    bodies.put(id, new ByteArrayOutputStream());
                    String path = h.headers().path().toString();
                    if (path.equals("/goaway") && index == 0 && !wentAway) {
                        wentAway = true;
                        active.decrementAndGet();
                        heads.remove(id);
                        codec.goAway(ctx.pipeline().context(codec), id - 2, Http2Error.NO_ERROR.code(), ctx.alloc().buffer(0),
                                ctx.newPromise());
                        ctx.flush();
                        releaseHeld();
                        return;
                    }
                    if (path.startsWith("/early")) {
                        answer(ctx, h.stream(), id);
                    } else if (h.isEndStream()) {
                        answerOrHold(ctx, h.stream(), id);
                    }
                } else if (msg instanceof Http2HeadersFrame h && h.isEndStream()) { // request trailers
                    answerOrHold(ctx, h.stream(), h.stream().id());
                } else if (msg instanceof Http2DataFrame d) {
                    int id = d.stream().id();
                    ByteArrayOutputStream b = bodies.get(id);
                    if (b != null) {
                        ByteBuf c = d.content();
                        byte[] bytes = new byte[c.readableBytes()];
                        c.getBytes(c.readerIndex(), bytes);
                        b.writeBytes(bytes);
                    }
                    if (d.isEndStream()) {
                        answerOrHold(ctx, d.stream(), id);
                    }
                } else if (msg instanceof Http2ResetFrame r) {
                    resets.incrementAndGet();
                    if (heads.remove(r.stream().id()) != null) {
                        active.decrementAndGet();
                    }
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        private void answerOrHold(ChannelHandlerContext ctx, Http2FrameStream s, int id) {
            Http2Headers h = heads.get(id);
            if (h == null) {
                return;
            }
            if (h.path().toString().startsWith("/hold")) {
                held.add(() -> answer(ctx, s, id));
            } else {
                answer(ctx, s, id);
            }
        }

        private void answer(ChannelHandlerContext ctx, Http2FrameStream s, int id) {
            Http2Headers req = heads.remove(id);
            if (req == null) {
                return;
            }
            active.decrementAndGet();
            ByteArrayOutputStream b = bodies.remove(id);
            byte[] body = ("conn=" + index + " stream=" + id + (b == null || b.size() == 0 ? "" : " body=" + b.toString(StandardCharsets.UTF_8)))
                    .getBytes(StandardCharsets.UTF_8);
            Http2Headers head = new DefaultHttp2Headers().status("200").set("content-type", "text/plain");
            CharSequence te = req.get("te");
            head.set("x-seen-te", te == null ? "-" : te);
            head.set("x-seen-authority", req.authority() == null ? "-" : req.authority());
            head.set("x-seen-connection", req.get("connection") == null ? "-" : "present");
            boolean trailers = req.path().toString().startsWith("/trailers");
            ctx.write(new DefaultHttp2HeadersFrame(head, false).stream(s));
            ctx.write(new DefaultHttp2DataFrame(Bufs.copied(body), !trailers).stream(s));
            if (trailers) {
                ctx.write(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().set("grpc-status", "0").set("x-trailer", "t"), true)
                        .stream(s));
            }
            ctx.flush();
        }
    }
}
