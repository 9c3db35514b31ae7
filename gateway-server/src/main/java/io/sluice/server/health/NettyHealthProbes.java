package io.sluice.server.health;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import io.sluice.codec.bolt.BoltDecodeError;
import io.sluice.codec.bolt.BoltFrame;
import io.sluice.codec.bolt.BoltFrameDecoder;
import io.sluice.codec.bolt.BoltFrameEncoder;
import io.sluice.codec.bolt.BoltFrames;
import io.sluice.codec.bolt.BoltFraming;
import io.sluice.codec.bolt.BoltStatus;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HealthCheckConfig;
import io.sluice.lb.HealthProbe;
import io.sluice.lb.ProbeCallback;
import io.sluice.server.tls.upstream.UpstreamTls;
import io.sluice.server.tls.upstream.UpstreamTlsContexts;
import io.sluice.server.tls.upstream.UpstreamTlsException;
import io.sluice.server.transport.Transport;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The active health probes, on the gateway's own event loops, each on a fresh connection (a probe
 * never queues behind user traffic): {@code tcp} (the connect succeeds), {@code http} (the
 * configured request gets an expected status) and {@code bolt} (a heartbeat gets a successful
 * ack). The checker in gateway-lb schedules them and enforces their timeout; a probe closes its
 * connection when it reports, and whatever it reports after the timeout is ignored there.
 *
 * <p>A cluster with a {@code tls} block is probed over TLS with the cluster's own context (same
 * verification, SNI and client certificate as its traffic): the connection counts once the
 * handshake succeeded, so a host whose certificate fails verification fails its check.
 */
public final class NettyHealthProbes implements HealthProbe.Factory {

    private final EventLoopGroup group;
    private final Transport transport;
    private final UpstreamTlsContexts tls;

    public NettyHealthProbes(EventLoopGroup group, Transport transport) {
        this(group, transport, null);
    }

    /** @param tls the clusters' upstream TLS contexts (probes of clusters with a tls block use them), or null */
    public NettyHealthProbes(EventLoopGroup group, Transport transport, UpstreamTlsContexts tls) {
        this.group = group;
        this.transport = transport;
        this.tls = tls;
    }

    @Override
    public HealthProbe create(ClusterConfig cluster) {
        HealthCheckConfig hc = cluster.healthCheck();
        return switch (hc.probe()) {
            case HealthCheckConfig.TCP -> (host, cb) -> connect(cluster, host, hc, null, cb);
            case HealthCheckConfig.HTTP -> (host, cb) -> connect(cluster, host, hc, new HttpCheck(host, hc, once(cb)), cb);
            case HealthCheckConfig.BOLT -> (host, cb) -> connect(cluster, host, hc, new BoltCheck(once(cb)), cb);
            default -> throw new IllegalStateException("unknown health probe \"" + hc.probe() + "\" in cluster "
                    + cluster.name() + " (custom probes are registered by embedders through LbContext)");
        };
    }

    /** Completes the callback at most once, whatever reports first (a read, a close, an error). */
    private static ProbeCallback once(ProbeCallback cb) {
        AtomicBoolean done = new AtomicBoolean();
        return (ok, reason) -> {
            if (done.compareAndSet(false, true)) {
                cb.complete(ok, reason);
            }
        };
    }

    private void connect(ClusterConfig cluster, Host host, HealthCheckConfig hc, Check check, ProbeCallback cb) {
        ProbeCallback report = check != null ? check.callback : once(cb);
        // upstream TLS: the cluster's current context, by name (a reload may have replaced the block this probe was made with)
        UpstreamTls upTls = cluster.tls() == null || tls == null ? null : tls.current().get(cluster.name());
        Bootstrap b = new Bootstrap().group(group).channel(transport.socketChannel())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.max(1, Math.min(Integer.MAX_VALUE, hc.timeout().toMillis())))
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        if (upTls != null) {
                            upTls.addHandler(ch, host, hc.timeout());
                        }
                        if (check != null) {
                            check.init(ch);
                        }
                    }
                });
        ChannelFuture connected = b.connect(host.host(), host.port());
        if (cluster.tls() != null) {
            connected = UpstreamTls.handshake(upTls, connected, host, cluster.name());
        }
        connected.addListener((ChannelFuture f) -> {
            if (!f.isSuccess()) {
                String tlsFailure = UpstreamTlsException.describe(f.cause());
                report.complete(false, tlsFailure != null ? tlsFailure : "connect failed: " + f.cause().getMessage());
            } else if (check == null) {
                report.complete(true, "connected");
                f.channel().close();
            } else {
                // give up on the connection with the checker's timeout, so probes never pile up
                f.channel().eventLoop().schedule(() -> {
                    report.complete(false, "no answer within " + hc.timeout().toMillis() + " ms");
                    f.channel().close();
                }, hc.timeout().toMillis(), TimeUnit.MILLISECONDS);
            }
        });
    }

    /** A protocol-level check on a connected channel. */
    private abstract static class Check extends ChannelInboundHandlerAdapter {
        final ProbeCallback callback;

        Check(ProbeCallback callback) {
            this.callback = callback;
        }

        abstract void init(Channel ch);

        /** Writes the probe's request: at once on cleartext, after the handshake over TLS. */
        abstract void send(ChannelHandlerContext ctx);

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            // Over TLS the request waits for the handshake: written earlier it would sit in the
            // SslHandler's queue, and a probe torn down mid-handshake would leave it unreleased.
            io.netty.handler.ssl.SslHandler ssl = ctx.pipeline().get(io.netty.handler.ssl.SslHandler.class);
            if (ssl == null) {
                send(ctx);
            } else {
                ssl.handshakeFuture().addListener(f -> {
                    if (f.isSuccess() && ctx.channel().isActive()) {
                        send(ctx);
                    }
                });
            }
            ctx.fireChannelActive();
        }

        void report(ChannelHandlerContext ctx, boolean ok, String reason) {
            callback.complete(ok, reason);
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            callback.complete(false, "connection closed before an answer");
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            report(ctx, false, String.valueOf(cause.getMessage()));
        }
    }

    /** Sends the configured request; passes on an expected status. */
    private static final class HttpCheck extends Check {
        private final Host host;
        private final HealthCheckConfig hc;

        HttpCheck(Host host, HealthCheckConfig hc, ProbeCallback callback) {
            super(callback);
            this.host = host;
            this.hc = hc;
        }

        @Override
        void init(Channel ch) {
            ch.pipeline().addLast(new HttpClientCodec(4096, 16384, 8192), this);
        }

        @Override
        void send(ChannelHandlerContext ctx) {
            FullHttpRequest req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.valueOf(hc.httpMethod()),
                    hc.httpPath(), Unpooled.EMPTY_BUFFER);
            req.headers().set(HttpHeaderNames.HOST, hc.httpHost() != null ? hc.httpHost() : host.address())
                    .set(HttpHeaderNames.USER_AGENT, "sluice-health-check")
                    .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(req);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof HttpResponse r) {
                    int status = r.status().code();
                    report(ctx, hc.expects(status), "HTTP " + status);
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }
    }

    /** Sends a Bolt heartbeat; passes on a successful heartbeat ack. */
    private static final class BoltCheck extends Check {

        BoltCheck(ProbeCallback callback) {
            super(callback);
        }

        @Override
        void init(Channel ch) {
            ch.pipeline().addLast(new BoltFrameDecoder(1 << 20), (ChannelHandler) BoltFrameEncoder.INSTANCE, this);
        }

        @Override
        void send(ChannelHandlerContext ctx) {
            ctx.writeAndFlush(BoltFrames.heartbeat(ctx.alloc(), BoltFraming.V1, 1));
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof BoltFrame f) {
                    boolean ok = f.isResponse() && f.isHeartbeat() && f.status() == BoltStatus.SUCCESS;
                    report(ctx, ok, ok ? "heartbeat ack" : "unexpected answer to a heartbeat (status " + f.status() + ")");
                } else if (msg instanceof BoltDecodeError e) {
                    report(ctx, false, "bad frame: " + e.message());
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }
    }
}
