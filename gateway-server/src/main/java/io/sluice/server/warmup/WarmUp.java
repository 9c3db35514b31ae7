package io.sluice.server.warmup;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.ssl.SslContext;
import io.sluice.codec.bolt.BoltFrame;
import io.sluice.codec.bolt.BoltFrameDecoder;
import io.sluice.codec.bolt.BoltFrameEncoder;
import io.sluice.codec.bolt.BoltFrames;
import io.sluice.codec.bolt.BoltFraming;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.TlsConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.core.time.Ticker;
import io.sluice.server.Gateway;
import io.sluice.server.demo.DemoHttpBackend;
import io.sluice.server.tls.WarmUpTls;
import io.sluice.server.transport.Transport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs the warm start ({@link WarmUpConfig}): a private gateway built from the same classes as the
 * real one — listeners, HTTP/1.1 and Bolt proxy handlers, codecs, upstream pools, the EDF balancer,
 * Prometheus meters — serves synthetic requests from in-process clients to in-process loopback
 * backends (127.0.0.1, free ports, owned and closed by the warm-up) until the duration has passed on
 * the ticker. Every round opens fresh client connections (accept, pipeline set-up, close), sends
 * keep-alive GETs and POSTs with a body and pipelined Bolt requests, and scrapes the private
 * registry. When the real config has a TLS listener, each round also makes full TLS handshakes and
 * a few HTTP requests over TLS to a private HTTP listener with that listener's TLS settings
 * ({@link WarmUpTls}: its certificate files, protocols, ciphers, ticket policy; no client
 * certificates), from clients that trust only those certificates.
 *
 * <p>What it never does: connect to a configured upstream (the private gateway's clusters hold only
 * the synthetic backends), record in the real gateway's registry or access log (the private one has
 * its own registry and no access log), bind a configured listener address (it binds 127.0.0.1:0).
 * A warm-up that fails is logged once and skipped: the gateway starts anyway.
 *
 * <p>What it leaves behind (docs/perf/2026-11-25-footprint.md): compiled code and nothing else it can
 * give back. The private gateway takes its buffers from the shared pool like the real one (the same
 * code paths; its event loops' thread caches go with their threads, and the arena chunks they used
 * are the ones the real event loops pick up next). The synthetic clients and backends take theirs
 * from a pool of their own ({@link PeerBuffers}: the same buffer classes as the gateway's, so the
 * JIT's type profiles of the shared codecs see only those), which is dropped and freed at the end,
 * followed by one full collection of the warm-up's garbage ({@link #release}).
 */
public final class WarmUp {

    private static final Logger log = LoggerFactory.getLogger(WarmUp.class);

    static final int HTTP_CONNECTIONS = 4;
    static final int HTTP_REQUESTS_PER_CONNECTION = 32;
    static final int BOLT_CONNECTIONS = 4;
    static final int BOLT_REQUESTS_PER_CONNECTION = 128;
    static final int BOLT_PIPELINE = 16;
    /** TLS connections per round (a full handshake each), only when the config has a TLS listener. */
    static final int TLS_CONNECTIONS = 8;
    static final int TLS_REQUESTS_PER_CONNECTION = 2;
    /** Wall-clock bound on one round (a round normally takes milliseconds). */
    static final long ROUND_TIMEOUT_MS = 5_000;
    /** Worker threads of the private gateway, at most. */
    static final int MAX_WORKERS = 2;

    /**
     * What a warm-up did.
     *
     * @param rounds       rounds completed
     * @param httpRequests HTTP responses received
     * @param boltRequests Bolt responses received
     * @param tlsHandshakes TLS handshakes the private TLS listener counted as successful (0: no TLS listener configured)
     * @param tlsRequests  HTTP responses received over TLS (also in {@code httpRequests})
     * @param nanos        time it took on the ticker
     * @param failure      why it stopped early, or null
     */
    public record Result(int rounds, long httpRequests, long boltRequests, long tlsHandshakes, long tlsRequests, long nanos,
                         String failure) {
        @Override
        public String toString() {
            return "warm-up: " + rounds + " rounds, " + httpRequests + " HTTP + " + boltRequests + " Bolt synthetic requests"
                    + (tlsHandshakes > 0 || tlsRequests > 0 ? ", " + tlsHandshakes + " TLS handshakes (" + tlsRequests + " of the HTTP requests over TLS)" : "")
                    + " in " + TimeUnit.NANOSECONDS.toMillis(nanos) + " ms" + (failure == null ? "" : " (stopped: " + failure + ")");
        }
    }

    /** Hooks for tests: called on the warm-up thread after each completed round. */
    public interface Observer {
        void roundDone(int round);
    }

    private WarmUp() {
    }

    /**
     * Runs the warm-up; blocks for about {@code config.duration()} (on {@code ticker}). Never throws.
     *
     * @param real     the gateway's config: its transport type, and the TLS settings of its first TLS
     *                 listener if any (the warm-up then also makes TLS handshakes: {@link WarmUpTls})
     * @param observer called after each round, or null
     */
    public static Result run(GatewayConfig real, WarmUpConfig config, Ticker ticker, Observer observer) {
        long start = ticker.nanoTime();
        long budget = config.duration().toNanos();
        TransportConfig tc = real.transport();
        TransportConfig syntheticTransport = new TransportConfig(tc.type(),
                Math.min(MAX_WORKERS, Math.max(1, Transport.workerThreads(tc))), tc.backlog(), false);
        Transport transport = Transport.select(syntheticTransport);
        EventLoopGroup peers = transport.newGroup(1, "sluice-warm-up");
        PeerBuffers peerBuffers = new PeerBuffers();
        List<AutoCloseable> backends = new ArrayList<>();
        Gateway gw = null;
        int rounds = 0;
        AtomicLong http = new AtomicLong();
        AtomicLong bolt = new AtomicLong();
        AtomicLong tlsRequests = new AtomicLong();
        long tlsHandshakes = 0;
        String failure = null;
        try {
            TlsConfig realTls = WarmUpTls.firstTlsListener(real.listeners());
            WarmUpTls tls = realTls == null ? null : WarmUpTls.of(realTls);
            List<HostConfig> httpHosts = new ArrayList<>();
            List<HostConfig> boltHosts = new ArrayList<>();
            for (int i = 1; i <= 2; i++) {
                DemoHttpBackend h = DemoHttpBackend.start(transport, peers, "127.0.0.1", 0, "warm-up", peerBuffers.alloc);
                backends.add(h);
                httpHosts.add(new HostConfig("127.0.0.1", h.port(), i));
                SyntheticBolt b = SyntheticBolt.start(transport, peers, peerBuffers.alloc);
                backends.add(b);
                boltHosts.add(new HostConfig("127.0.0.1", b.port(), i));
            }
            gw = Gateway.builder().config(syntheticConfig(httpHosts, boltHosts, syntheticTransport, tls == null ? null : tls.listener()))
                    .meterRegistry(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).logLifecycle(false).build();
            gw.start().get(ROUND_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            InetSocketAddress httpAddr = gw.address("warm-up-http");
            InetSocketAddress boltAddr = gw.address("warm-up-bolt");
            InetSocketAddress httpsAddr = tls == null ? null : gw.address(TLS_LISTENER);
            PrometheusMeterRegistry reg = (PrometheusMeterRegistry) gw.meterRegistry();
            // a round in progress ends early once the time is up: no new request after the deadline
            java.util.function.BooleanSupplier expired = () -> ticker.nanoTime() - start >= budget;
            do {
                List<CompletableFuture<?>> done = new ArrayList<>();
                for (int i = 0; i < HTTP_CONNECTIONS; i++) {
                    done.add(httpClient(transport, peers, peerBuffers.alloc, httpAddr, HTTP_REQUESTS_PER_CONNECTION, http, expired, null));
                }
                for (int i = 0; tls != null && i < TLS_CONNECTIONS; i++) {
                    done.add(httpClient(transport, peers, peerBuffers.alloc, httpsAddr, TLS_REQUESTS_PER_CONNECTION,
                            new AtomicLong[]{http, tlsRequests}, expired, tls.client()));
                }
                for (int i = 0; i < BOLT_CONNECTIONS; i++) {
                    done.add(boltClient(transport, peers, peerBuffers.alloc, boltAddr, BOLT_REQUESTS_PER_CONNECTION, bolt, expired));
                }
                CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(ROUND_TIMEOUT_MS, TimeUnit.MILLISECONDS);
                reg.scrape(); // the /metrics rendering
                rounds++;
                tlsHandshakes = tlsHandshakes(reg);
                if (observer != null) {
                    observer.roundDone(rounds);
                }
            } while (ticker.nanoTime() - start < budget && !Thread.currentThread().isInterrupted());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = "interrupted";
        } catch (Exception | LinkageError e) {
            failure = String.valueOf(e.getCause() != null ? e.getCause() : e);
        } finally {
            if (gw != null) {
                try {
                    gw.shutdown().get(ROUND_TIMEOUT_MS, TimeUnit.MILLISECONDS);
                } catch (Exception e) {
                    failure = failure == null ? "close: " + e : failure;
                }
            }
            for (AutoCloseable c : backends) {
                try {
                    c.close();
                } catch (Exception e) {
                    // closing a loopback socket
                }
            }
            peers.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
        gw = null;
        backends.clear();
        release(peerBuffers);
        Result r = new Result(rounds, http.get(), bolt.get(), tlsHandshakes, tlsRequests.get(), ticker.nanoTime() - start, failure);
        if (failure != null) {
            log.warn("{}; starting anyway", r);
        } else {
            log.info("{}", r);
        }
        return r;
    }

    /**
     * The synthetic peers' buffer pool: a {@link PooledByteBufAllocator} of one direct arena with the
     * shared pool's page, chunk and cache sizes. Its event loop's thread cache is freed when that
     * loop's thread ends; the arena's chunks when the allocator becomes unreachable (the arena's
     * finalizer, run by {@link #release}).
     */
    static final class PeerBuffers {
        PooledByteBufAllocator alloc = new PooledByteBufAllocator(true, 0, 1, PooledByteBufAllocator.defaultPageSize(),
                PooledByteBufAllocator.defaultMaxOrder(), PooledByteBufAllocator.defaultSmallCacheSize(),
                PooledByteBufAllocator.defaultNormalCacheSize(), PooledByteBufAllocator.defaultUseCacheForAllThreads());
    }

    /**
     * What {@link #release} saw, for tests: the peers' pool (cleared once unreachable) and how many
     * buffers its arena handed out (not counting those served from the thread cache).
     */
    record Released(java.lang.ref.Reference<PooledByteBufAllocator> pool, long allocations) {
    }

    /** Called after the peers' pool is dropped, before the real listeners bind; for tests. */
    static volatile java.util.function.Consumer<Released> releaseObserver;

    /**
     * Gives back what the warm-up allocated and nothing after it uses: drops the peers' pool, then one
     * full collection (Serial: a few tens of milliseconds, before anything accepts) takes the warm-up's
     * objects out of the old generation and finds the pool unreachable, and its arenas' finalizers free
     * their chunks; this waits (at most {@value #RELEASE_WAIT_MS} ms) until Netty's count of direct
     * memory shows them freed. With {@code -XX:+DisableExplicitGC} that happens at a later collection.
     */
    static void release(PeerBuffers peerBuffers) {
        long held = peerBuffers.alloc.metric().usedDirectMemory();
        long allocations = peerBuffers.alloc.metric().directArenas().stream()
                .mapToLong(io.netty.buffer.PoolArenaMetric::numAllocations).sum();
        long before = io.netty.util.internal.PlatformDependent.usedDirectMemory();
        java.lang.ref.WeakReference<PooledByteBufAllocator> ref = new java.lang.ref.WeakReference<>(peerBuffers.alloc);
        peerBuffers.alloc = null;
        System.gc();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RELEASE_WAIT_MS);
        do {
            System.runFinalization();
            if (before < 0 || io.netty.util.internal.PlatformDependent.usedDirectMemory() <= before - held) {
                break;
            }
            try {
                Thread.sleep(5); // the reference handler has not queued the arenas for finalization yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        } while (System.nanoTime() < deadline && ref.refersTo(null));
        java.util.function.Consumer<Released> o = releaseObserver;
        if (o != null) {
            o.accept(new Released(ref, allocations));
        }
    }

    static final long RELEASE_WAIT_MS = 1_000;

    /** The name of the private gateway's TLS listener. */
    static final String TLS_LISTENER = "warm-up-https";

    /** Successful handshakes the private TLS listener counted ({@code sluice_tls_handshakes_total}). */
    private static long tlsHandshakes(PrometheusMeterRegistry reg) {
        return (long) reg.find("sluice.tls.handshakes").tag("listener", TLS_LISTENER).tag("result", "success").counters().stream()
                .mapToDouble(io.micrometer.core.instrument.Counter::count).sum();
    }

    /** The private gateway without TLS. */
    static GatewayConfig syntheticConfig(List<HostConfig> httpHosts, List<HostConfig> boltHosts, TransportConfig transport) {
        return syntheticConfig(httpHosts, boltHosts, transport, null);
    }

    /**
     * The private gateway: one HTTP and one Bolt listener on 127.0.0.1:0, two synthetic hosts each, no admin port;
     * with {@code tls}, an HTTP listener with it ({@value #TLS_LISTENER}) in front of the same hosts.
     */
    static GatewayConfig syntheticConfig(List<HostConfig> httpHosts, List<HostConfig> boltHosts, TransportConfig transport, TlsConfig tls) {
        ListenerConfig httpL = new ListenerConfig("warm-up-http", Protocol.HTTP, "127.0.0.1", 0,
                List.of(RouteConfig.to("warm-up-http")), null, null);
        ListenerConfig boltL = new ListenerConfig("warm-up-bolt", Protocol.BOLT, "127.0.0.1", 0, List.of(), null,
                new BoltOptions(BoltOptions.defaults().maxFrameLength(), BoltOptions.defaults().idleTimeout(), "warm-up-bolt"));
        ClusterConfig httpC = ClusterConfig.of("warm-up-http", httpHosts);
        ClusterConfig boltC = new ClusterConfig("warm-up-bolt", Protocol.BOLT, null, boltHosts, null, null, null, null,
                null, null, ClusterConfig.DEFAULT_PANIC_THRESHOLD, false, 2, 1.0);
        List<ListenerConfig> listeners = new ArrayList<>(List.of(httpL, boltL));
        if (tls != null) {
            listeners.add(ListenerConfig.builder().name(TLS_LISTENER).protocol(Protocol.HTTP).address("127.0.0.1").port(0)
                    .routes(RouteConfig.to("warm-up-http")).tls(tls).build());
        }
        return GatewayConfig.builder().listeners(listeners).clusters(httpC, boltC)
                .admin(new AdminConfig(false, "127.0.0.1", 0, true)) // meters on, no admin port
                .transport(transport).drainTimeout(Duration.ZERO).build();
    }

    private static final byte[] BODY = new byte[512];

    /**
     * One connection: {@code n} keep-alive requests one after the other (GET, then POST with a body, alternating);
     * over TLS with {@code tls} (a full handshake: no session is offered for resumption).
     */
    static CompletableFuture<Void> httpClient(Transport t, EventLoopGroup group, ByteBufAllocator alloc, InetSocketAddress to, int n,
                                              AtomicLong count, java.util.function.BooleanSupplier expired, SslContext tls) {
        return httpClient(t, group, alloc, to, n, new AtomicLong[]{count}, expired, tls);
    }

    private static CompletableFuture<Void> httpClient(Transport t, EventLoopGroup group, ByteBufAllocator alloc, InetSocketAddress to,
                                                      int n, AtomicLong[] counts, java.util.function.BooleanSupplier expired,
                                                      SslContext tls) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        new Bootstrap().group(group).channel(t.socketChannel()).option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.ALLOCATOR, alloc)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel c) {
                        if (tls != null) {
                            c.pipeline().addLast(tls.newHandler(c.alloc())); // requests wait in it until the handshake is done
                        }
                        c.pipeline().addLast(new HttpClientCodec(), new SimpleChannelInboundHandler<HttpObject>() {
                            int sent;
                            int received;

                            @Override
                            public void channelActive(ChannelHandlerContext ctx) {
                                send(ctx);
                            }

                            private void send(ChannelHandlerContext ctx) {
                                boolean post = (sent++ & 1) == 1;
                                ByteBuf body = post ? ctx.alloc().buffer(BODY.length).writeBytes(BODY) : ctx.alloc().buffer(0);
                                FullHttpRequest req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1,
                                        post ? HttpMethod.POST : HttpMethod.GET, "/warm-up?i=" + sent, body);
                                req.headers().set(HttpHeaderNames.HOST, "warm-up").set(HttpHeaderNames.USER_AGENT, "sluice-warm-up")
                                        .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
                                ctx.writeAndFlush(req, ctx.voidPromise());
                            }

                            @Override
                            protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
                                if (msg instanceof LastHttpContent) {
                                    received++;
                                    for (AtomicLong count : counts) {
                                        count.incrementAndGet();
                                    }
                                    if (received >= n || expired.getAsBoolean()) {
                                        done.complete(null);
                                        ctx.close();
                                    } else {
                                        send(ctx);
                                    }
                                }
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                done.completeExceptionally(new IllegalStateException("synthetic HTTP connection closed after "
                                        + received + " responses"));
                            }

                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                done.completeExceptionally(cause);
                                ctx.close();
                            }
                        });
                    }
                }).connect(to).addListener(f -> {
                    if (!f.isSuccess()) {
                        done.completeExceptionally(f.cause());
                    }
                });
        return done;
    }

    private static final Map<String, String> BOLT_HEADERS = Map.of("service", "io.sluice.WarmUp:1.0",
            "sofa_head_method_name", "ping");

    /** One connection: {@code n} Bolt v1 requests, {@value #BOLT_PIPELINE} in flight. */
    static CompletableFuture<Void> boltClient(Transport t, EventLoopGroup group, ByteBufAllocator alloc, InetSocketAddress to, int n,
                                              AtomicLong count, java.util.function.BooleanSupplier expired) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        new Bootstrap().group(group).channel(t.socketChannel()).option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.ALLOCATOR, alloc)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel c) {
                        c.pipeline().addLast(new BoltFrameDecoder(), BoltFrameEncoder.INSTANCE, new SimpleChannelInboundHandler<BoltFrame>() {
                            int sent;
                            int received;

                            @Override
                            public void channelActive(ChannelHandlerContext ctx) {
                                for (int i = 0; i < Math.min(BOLT_PIPELINE, n); i++) {
                                    send(ctx);
                                }
                                ctx.flush();
                            }

                            private void send(ChannelHandlerContext ctx) {
                                ByteBuf content = ctx.alloc().buffer(64).writeZero(64);
                                try {
                                    ctx.write(BoltFrames.request(ctx.alloc(), BoltFraming.V1, false, ++sent, 1, 3000,
                                            "com.alipay.sofa.rpc.core.request.SofaRequest", BOLT_HEADERS, content), ctx.voidPromise());
                                } finally {
                                    content.release();
                                }
                            }

                            @Override
                            protected void channelRead0(ChannelHandlerContext ctx, BoltFrame f) {
                                if (!f.isResponse()) {
                                    return;
                                }
                                received++;
                                count.incrementAndGet();
                                if (received >= n || (received == sent && expired.getAsBoolean())) {
                                    done.complete(null);
                                    ctx.close();
                                } else if (sent < n && !expired.getAsBoolean()) {
                                    send(ctx);
                                    ctx.flush();
                                }
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                done.completeExceptionally(new IllegalStateException("synthetic Bolt connection closed after "
                                        + received + " responses"));
                            }

                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                done.completeExceptionally(cause);
                                ctx.close();
                            }
                        });
                    }
                }).connect(to).addListener(f -> {
                    if (!f.isSuccess()) {
                        done.completeExceptionally(f.cause());
                    }
                });
        return done;
    }
}
