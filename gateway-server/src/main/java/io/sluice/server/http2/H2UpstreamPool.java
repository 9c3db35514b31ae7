package io.sluice.server.http2;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.handler.codec.http2.Http2Connection;
import io.netty.handler.codec.http2.Http2ConnectionAdapter;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2PingFrame;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2SettingsFrame;
import io.netty.handler.codec.http2.Http2Stream;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.FastThreadLocal;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.UpstreamHttp2Config;
import io.sluice.core.config.UpstreamProtocol;
import io.sluice.server.channel.ConnectionTimer;
import io.sluice.server.channel.SluicePipeline;
import io.sluice.server.http.HttpUpstreamPool;
import io.sluice.server.metrics.ClusterMetrics;
import io.sluice.server.metrics.UpstreamH2Metrics;
import io.sluice.server.tls.upstream.UpstreamTls;
import io.sluice.server.tls.upstream.UpstreamTlsContexts;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Multiplexed HTTP/2 connections to the hosts of {@code upstream_protocol: h2c} and {@code h2}
 * clusters, one pool per event loop (so no locks), keyed by cluster and host address. A stream
 * goes on the first connection whose peer has said its SETTINGS and has room under its
 * {@code SETTINGS_MAX_CONCURRENT_STREAMS}; when every connection is full (or none is open yet) a
 * new one is opened and the stream waits for its SETTINGS.
 *
 * <p>Room is counted with the codec's own count of active streams plus the streams being opened
 * (child channel opened, HEADERS not yet written), and a closed stream frees its place only once
 * the codec has closed it: counting the child channel's close instead let a waiting stream start
 * while the codec still counted the old one (the child closes inside the frame callback, before
 * the codec closes the stream, or before its RST_STREAM is written), and the codec then refused
 * it locally ({@code REFUSED_STREAM}, "Maximum active streams violated").
 *
 * <p>{@code h2}: TLS with ALPN {@code h2} from the cluster's {@code tls} block; the HTTP/2 codec is
 * added once the handshake selected {@code h2} (else the connection fails, naming what the peer
 * selected). A connection that received GOAWAY takes no new streams; streams waiting for it go to
 * another connection. With {@code http2.ping_interval}, a connection without stream activity for
 * that long gets a PING and is closed when its ACK does not come within {@code ping_timeout}.
 */
final class H2UpstreamPool {

    private static final Logger log = LoggerFactory.getLogger(H2UpstreamPool.class);

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

    /** Gets the upstream stream (with its handler in the pipeline), or null and why none could be had. */
    interface Attach {
        void attached(Http2StreamChannel s, String failure);
    }

    private final Map<String, List<Conn>> conns = new HashMap<>();

    /**
     * Opens a stream to {@code host} with {@code handler} in its pipeline; {@code done} gets the
     * stream channel, or null and the reason when no connection could be made. Event loop only.
     */
    void open(HttpUpstreamPool up, Host host, ClusterConfig cluster, ChannelHandler handler, Attach done) {
        String key = cluster.name() + '/' + host.address();
        List<Conn> list = conns.computeIfAbsent(key, k -> new ArrayList<>(2));
        Conn pending = null;
        for (int i = 0; i < list.size(); i++) {
            Conn c = list.get(i);
            if (c.goAway || c.failure != null || !c.channel.isActive() && c.ready || c.stale(cluster)) {
                continue;
            }
            if (!c.ready) {
                if (c.waiters.size() < c.limit) {
                    pending = c;
                }
                continue;
            }
            if (c.open() < c.limit) {
                c.start(handler, done);
                return;
            }
        }
        if (pending == null) {
            pending = connect(up, host, cluster, list);
        }
        pending.waiters.add(new Waiter(handler, done));
    }

    /** The connections of this loop to {@code host} of {@code cluster} (tests). */
    List<Channel> connections(String cluster, Host host) {
        List<Conn> list = conns.get(cluster + '/' + host.address());
        List<Channel> out = new ArrayList<>();
        if (list != null) {
            for (Conn c : list) {
                out.add(c.channel);
            }
        }
        return out;
    }

    /** PINGs sent and whether one awaits its ACK on the first connection to {@code host} (tests; event loop). */
    String pingState(String cluster, Host host) {
        List<Conn> list = conns.get(cluster + '/' + host.address());
        if (list == null || list.isEmpty()) {
            return "none";
        }
        Conn c = list.get(0);
        return "sent=" + c.pingsSent + " awaiting=" + c.awaitingAck;
    }

    private Conn connect(HttpUpstreamPool up, Host host, ClusterConfig cluster, List<Conn> list) {
        ClusterMetrics cm = up.clusterMeters(cluster.name());
        Conn c = new Conn(this, up, host, cluster, cm == null ? null : cm.h2());
        list.add(c);
        boolean tls = cluster.upstreamProtocol() == UpstreamProtocol.H2;
        UpstreamTls upTls = tls ? UpstreamTlsContexts.lookup(up.upstreamTls(), cluster) : null;
        if (tls && (upTls == null || upTls.h2Context() == null)) {
            c.failure = "no TLS context for cluster " + cluster.name() + " (its tls block was not loaded)";
        }
        Bootstrap b = up.template().clone()
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, cluster.connectTimeout().toMillis()))
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        if (cm != null) {
                            ch.pipeline().addLast(SluicePipeline.UPSTREAM_METER, cm.connectionHandler());
                        }
                        if (tls) {
                            upTls.addH2Handler(ch, host, cluster.connectTimeout());
                        }
                        // issue #21: one write per turn for all streams (before the codec, which addCodec puts before Conn)
                        Http2Server.tuneUpstream(ch);
                        ch.pipeline().addLast(Conn.NAME, c);
                        if (!tls) {
                            c.addCodec(ch);
                        }
                    }
                });
        if (c.failure != null) { // never fall back to clear text
            up.loop().execute(() -> {
                list.remove(c);
                c.fail();
            });
            return c;
        }
        ChannelFuture connect = b.connect(host.host(), host.port());
        c.channel = connect.channel();
        ChannelFuture ready = tls ? UpstreamTls.handshake(upTls, connect, host, cluster.name()) : connect;
        ready.addListener((ChannelFutureListener) f -> {
            if (!f.isSuccess()) {
                c.failure = (tls && f.cause() instanceof io.sluice.server.tls.upstream.UpstreamTlsException
                        ? "" : "cannot connect to " + host.address() + " of cluster " + cluster.name() + ": ")
                        + f.cause().getMessage();
                c.channel.close();
                c.fail();
            } else if (tls) {
                SslHandler ssl = (SslHandler) c.channel.pipeline().get(UpstreamTls.HANDLER);
                String alpn = ssl.applicationProtocol();
                if (!ApplicationProtocolNames.HTTP_2.equals(alpn)) {
                    c.failure = "upstream " + host.address() + " of cluster " + cluster.name()
                            + " did not negotiate HTTP/2 over TLS (ALPN: " + (alpn == null ? "none" : alpn) + ")";
                    logOnce(c.failure);
                    c.channel.close();
                    c.fail();
                } else {
                    c.addCodec(c.channel);
                }
            }
        });
        c.channel.closeFuture().addListener(f -> {
            list.remove(c);
            c.closed();
        });
        return c;
    }

    private String lastLogged;

    /** One log line per change of reason (per event loop). */
    private void logOnce(String why) {
        if (!why.equals(lastLogged)) {
            lastLogged = why;
            log.warn("{}", why);
        }
    }

    private record Waiter(ChannelHandler handler, Attach done) {
    }

    /** One HTTP/2 connection: its peer's stream limit, the streams being opened on it, its PING keep-alive. */
    private static final class Conn extends ChannelInboundHandlerAdapter {
        static final String NAME = "h2-upstream";

        final H2UpstreamPool pool;
        final HttpUpstreamPool up;
        final Host host;
        final ClusterConfig cluster;
        final UpstreamH2Metrics meters;
        final UpstreamHttp2Config options;
        Channel channel;
        Http2Connection connection;
        boolean ready;
        boolean goAway;
        boolean counted;
        /** Why the connection could not be used (TLS, ALPN, connect), null while it can. */
        String failure;
        /** The peer's SETTINGS_MAX_CONCURRENT_STREAMS (unlimited until it says). */
        long limit = Integer.MAX_VALUE;
        /** Streams whose child channel is being opened: not yet counted by the codec. */
        int starting;
        final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
        private boolean drainScheduled;
        private final Runnable drainTask = () -> {
            drainScheduled = false;
            drain();
        };
        // PING keep-alive
        private ConnectionTimer pingTimer;
        private long lastActivity;
        private long pingSentAt;
        private boolean awaitingAck;
        private int pingsSent;

        Conn(H2UpstreamPool pool, HttpUpstreamPool up, Host host, ClusterConfig cluster, UpstreamH2Metrics meters) {
            this.pool = pool;
            this.up = up;
            this.host = host;
            this.cluster = cluster;
            this.meters = meters;
            this.options = cluster.http2();
        }

        /**
         * Whether a reload changed how the cluster's hosts are reached (h2c / h2, its tls block): the
         * connection then takes no new streams (those in flight finish on it).
         */
        boolean stale(ClusterConfig now) {
            return now != cluster && (now.upstreamProtocol() != cluster.upstreamProtocol()
                    || !java.util.Objects.equals(now.tls(), cluster.tls()));
        }

        /** Streams that count against the peer's limit. */
        int open() {
            return starting + (connection == null ? 0 : connection.local().numActiveStreams());
        }

        void addCodec(Channel ch) {
            Http2FrameCodec codec = Http2FrameCodecBuilder.forClient()
                    .initialSettings(Http2Settings.defaultSettings().pushEnabled(false))
                    .validateHeaders(true).build();
            connection = codec.connection();
            connection.addListener(new Http2ConnectionAdapter() {
                @Override
                public void onStreamActive(Http2Stream stream) {
                    if (meters != null) {
                        meters.streamOpened();
                    }
                    lastActivity = now();
                }

                @Override
                public void onStreamClosed(Http2Stream stream) {
                    if (meters != null) {
                        meters.streamClosed();
                    }
                    lastActivity = now();
                    // its place is free now that the codec closed it; start waiters outside the codec's callback
                    if (!waiters.isEmpty() && !drainScheduled) {
                        drainScheduled = true;
                        channel.eventLoop().execute(drainTask);
                    }
                }
            });
            ch.pipeline().addBefore(NAME, null, codec);
            ch.pipeline().addBefore(NAME, null, new Http2MultiplexHandler(new ChannelInboundHandlerAdapter()));
            if (meters != null) {
                meters.connectionOpened();
                counted = true;
            }
        }

        private long now() {
            return pingTimer == null ? 0 : pingTimer.now();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof Http2SettingsFrame s) {
                Long max = s.settings().maxConcurrentStreams();
                if (max != null) {
                    limit = max;
                }
                if (!ready) {
                    ready = true;
                    startPings();
                }
                drain();
            } else if (msg instanceof Http2GoAwayFrame g) {
                if (!goAway) {
                    goAway = true; // streams above its last-stream-id are closed by the codec (and moved); the others finish
                    if (meters != null) {
                        meters.goAwayReceived();
                    }
                    moveWaiters();
                }
            } else if (msg instanceof Http2PingFrame p && p.ack()) {
                awaitingAck = false;
                lastActivity = now();
            }
            ReferenceCountUtil.release(msg);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }

        /** Starts waiting streams while there is room. */
        private void drain() {
            while (!waiters.isEmpty() && open() < limit && !goAway && channel.isActive()) {
                Waiter w = waiters.poll();
                start(w.handler, w.done);
            }
            if (goAway) {
                moveWaiters();
            }
        }

        /** Waiters of a connection that takes no more streams go to another (or a new) one. */
        private void moveWaiters() {
            Waiter w;
            while ((w = waiters.poll()) != null) {
                pool.open(up, host, cluster, w.handler, w.done);
            }
        }

        void start(ChannelHandler handler, Attach done) {
            starting++;
            new Http2StreamChannelBootstrap(channel).handler(handler).open().addListener(f -> {
                try {
                    if (f.isSuccess()) {
                        done.attached((Http2StreamChannel) f.getNow(), null); // writes its HEADERS: the codec counts it
                    } else {
                        done.attached(null, "cannot open a stream to " + host.address() + " of cluster " + cluster.name());
                    }
                } finally {
                    starting--;
                }
            });
        }

        void fail() {
            Waiter w;
            String why = failure != null ? failure : "connection to " + host.address() + " of cluster " + cluster.name() + " closed";
            while ((w = waiters.poll()) != null) {
                w.done.attached(null, why);
            }
        }

        void closed() {
            if (pingTimer != null) {
                pingTimer.cancel();
            }
            if (counted) {
                counted = false;
                meters.connectionClosed();
            }
            if (failure == null && !waiters.isEmpty() && ready) {
                moveWaiters(); // streams that had not started: another connection
            } else if (failure == null && !ready) {
                channel.eventLoop().execute(this::fail); // after the connect or handshake listener said why
            } else {
                fail();
            }
        }

        // ------------------------------------------------------------ PING keep-alive

        private void startPings() {
            if (!options.pings()) {
                return;
            }
            pingTimer = new ConnectionTimer(up.scheduler(), this::onPingTimer);
            lastActivity = pingTimer.now();
            pingTimer.arm(lastActivity + options.pingInterval().toNanos());
        }

        private void onPingTimer() {
            if (!channel.isActive()) {
                return;
            }
            long now = pingTimer.now();
            if (awaitingAck) {
                long due = pingSentAt + options.pingTimeout().toNanos();
                if (now - due >= 0) {
                    if (meters != null) {
                        meters.pingTimedOut();
                    }
                    pool.logOnce("upstream " + host.address() + " of cluster " + cluster.name()
                            + " did not acknowledge a PING within " + options.pingTimeout().toMillis() + " ms: connection closed");
                    channel.close();
                    return;
                }
                pingTimer.arm(due);
                return;
            }
            long due = lastActivity + options.pingInterval().toNanos();
            if (now - due >= 0) {
                awaitingAck = true;
                pingsSent++;
                pingSentAt = now;
                channel.writeAndFlush(new DefaultHttp2PingFrame(now), channel.voidPromise());
                pingTimer.arm(now + options.pingTimeout().toNanos());
            } else {
                pingTimer.arm(due);
            }
        }
    }
}
