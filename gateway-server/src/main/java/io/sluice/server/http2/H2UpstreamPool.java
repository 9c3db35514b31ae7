package io.sluice.server.http2;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2SettingsFrame;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.FastThreadLocal;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Multiplexed h2c connections to the hosts of {@code upstream_protocol: h2c} clusters, one pool per
 * event loop (so no locks), keyed by cluster and host address. A stream goes on the first
 * connection whose peer has said its SETTINGS and has room under its
 * {@code SETTINGS_MAX_CONCURRENT_STREAMS}; when every connection is full (or none is open yet) a
 * new one is opened and the stream waits for its SETTINGS. A connection that received GOAWAY takes
 * no new streams; its streams in flight finish, and it closes when the peer closes it.
 */
final class H2UpstreamPool {

    private static final FastThreadLocal<H2UpstreamPool> POOLS = new FastThreadLocal<>() {
        @Override
        protected H2UpstreamPool initialValue() {
            return new H2UpstreamPool();
        }
    };

    /** The pool of the calling event loop. */
    static H2UpstreamPool current() {
        return POOLS.get();
    }

    private final Map<String, List<Conn>> conns = new HashMap<>();

    /**
     * Opens a stream to {@code host} with {@code handler} in its pipeline; {@code done} gets the
     * stream channel, or null when no connection could be made. Event loop only.
     */
    void open(Bootstrap template, Host host, ClusterConfig cluster, ChannelHandler handler, Consumer<Http2StreamChannel> done) {
        String key = cluster.name() + '/' + host.address();
        List<Conn> list = conns.computeIfAbsent(key, k -> new ArrayList<>(2));
        Conn pending = null;
        for (Conn c : list) {
            if (c.goAway || !c.channel.isActive()) {
                continue;
            }
            if (!c.ready) {
                if (c.waiters.size() < c.limit) {
                    pending = c;
                }
                continue;
            }
            if (c.reserved < c.limit) {
                c.start(handler, done);
                return;
            }
        }
        if (pending == null) {
            pending = connect(template, host, cluster, list);
        }
        pending.waiters.add(new Waiter(handler, done));
    }

    private Conn connect(Bootstrap template, Host host, ClusterConfig cluster, List<Conn> list) {
        Conn c = new Conn();
        list.add(c);
        Bootstrap b = template.clone()
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, cluster.connectTimeout().toMillis()))
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        Http2FrameCodec codec = Http2FrameCodecBuilder.forClient()
                                .initialSettings(Http2Settings.defaultSettings().pushEnabled(false))
                                .validateHeaders(true).build();
                        Http2Server.tuneUpstream(ch); // issue #21: one write per turn for all streams
                        ch.pipeline().addLast(codec, new Http2MultiplexHandler(new ChannelInboundHandlerAdapter()), c);
                    }
                });
        c.channel = b.connect(host.host(), host.port()).addListener((ChannelFutureListener) f -> {
            if (!f.isSuccess()) {
                c.fail();
            }
        }).channel();
        c.channel.closeFuture().addListener(f -> {
            list.remove(c);
            c.fail();
        });
        return c;
    }

    private record Waiter(ChannelHandler handler, Consumer<Http2StreamChannel> done) {
    }

    /** One h2c connection: its peer's stream limit and the streams reserved on it. */
    private static final class Conn extends ChannelInboundHandlerAdapter {
        Channel channel;
        boolean ready;
        boolean goAway;
        /** The peer's SETTINGS_MAX_CONCURRENT_STREAMS (unlimited until it says). */
        long limit = Integer.MAX_VALUE;
        int reserved;
        final ArrayDeque<Waiter> waiters = new ArrayDeque<>();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof Http2SettingsFrame s) {
                Long max = s.settings().maxConcurrentStreams();
                if (max != null) {
                    limit = max;
                }
                ready = true;
                drain();
            } else if (msg instanceof Http2GoAwayFrame) {
                goAway = true; // streams above its last-stream-id are closed by the codec; the others finish
            }
            ReferenceCountUtil.release(msg);
        }

        /** Starts waiting streams while there is room. */
        private void drain() {
            while (!waiters.isEmpty() && reserved < limit && !goAway) {
                Waiter w = waiters.poll();
                start(w.handler, w.done);
            }
        }

        void start(ChannelHandler handler, Consumer<Http2StreamChannel> done) {
            reserved++;
            new Http2StreamChannelBootstrap(channel).handler(handler).open().addListener(f -> {
                if (f.isSuccess()) {
                    Http2StreamChannel s = (Http2StreamChannel) f.getNow();
                    s.closeFuture().addListener(x -> {
                        reserved--;
                        drain();
                    });
                    done.accept(s);
                } else {
                    reserved--;
                    done.accept(null);
                }
            });
        }

        void fail() {
            Waiter w;
            while ((w = waiters.poll()) != null) {
                w.done.accept(null);
            }
        }
    }
}
