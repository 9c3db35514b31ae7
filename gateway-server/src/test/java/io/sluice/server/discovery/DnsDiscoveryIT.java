package io.sluice.server.discovery;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.handler.codec.dns.DatagramDnsQuery;
import io.netty.handler.codec.dns.DatagramDnsQueryDecoder;
import io.netty.handler.codec.dns.DatagramDnsResponse;
import io.netty.handler.codec.dns.DatagramDnsResponseEncoder;
import io.netty.handler.codec.dns.DefaultDnsRawRecord;
import io.netty.handler.codec.dns.DnsQuestion;
import io.netty.handler.codec.dns.DnsRecordType;
import io.netty.handler.codec.dns.DnsResponseCode;
import io.netty.handler.codec.dns.DnsSection;
import io.sluice.codec.testing.Bufs;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.discovery.DiscoveredHost;
import io.sluice.core.discovery.HostSource;
import io.sluice.core.time.Cancellable;
import io.sluice.core.time.ManualScheduler;
import io.sluice.core.time.Scheduler;
import io.sluice.core.time.Ticker;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * DNS discovery against a real DNS server over real UDP sockets on loopback: a small authoritative
 * server built on Netty's DNS codec in this test, whose answers (records, TTL, NXDOMAIN, SERVFAIL) the
 * test changes. Re-resolution timing runs on a fake clock ({@link ManualScheduler}); queries go over
 * the wire on a real event loop.
 */
@Timeout(60)
class DnsDiscoveryIT {

    private static final String NAME = "svc.test.";

    private EventLoopGroup group;
    private Channel server;
    private volatile List<byte[]> answer = List.of();
    private volatile long ttl = 7;
    private volatile DnsResponseCode rcode = DnsResponseCode.NOERROR;
    private final Map<DnsRecordType, AtomicInteger> queries = new ConcurrentHashMap<>();

    @BeforeEach
    void startDnsServer() throws Exception {
        group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        server = new Bootstrap().group(group).channel(NioDatagramChannel.class)
                .option(ChannelOption.ALLOCATOR, Bufs.ALLOC)
                .handler(new ChannelInitializer<NioDatagramChannel>() {
                    @Override
                    protected void initChannel(NioDatagramChannel ch) {
                        ch.pipeline().addLast(new DatagramDnsQueryDecoder(), new DatagramDnsResponseEncoder(),
                                new SimpleChannelInboundHandler<DatagramDnsQuery>() {
                                    @Override
                                    protected void channelRead0(ChannelHandlerContext ctx, DatagramDnsQuery q) {
                                        answer(ctx, q);
                                    }
                                });
                    }
                }).bind("127.0.0.1", 0).sync().channel();
    }

    private void answer(ChannelHandlerContext ctx, DatagramDnsQuery q) {
        DnsQuestion question = q.recordAt(DnsSection.QUESTION);
        queries.computeIfAbsent(question.type(), t -> new AtomicInteger()).incrementAndGet();
        DatagramDnsResponse r = new DatagramDnsResponse(q.recipient(), q.sender(), q.id());
        r.setAuthoritativeAnswer(true).setRecursionDesired(q.isRecursionDesired());
        r.addRecord(DnsSection.QUESTION, question);
        r.setCode(rcode);
        if (rcode == DnsResponseCode.NOERROR && question.name().equalsIgnoreCase(NAME)) {
            for (byte[] ip : answer) {
                if ((ip.length == 4) == (question.type() == DnsRecordType.A)) {
                    r.addRecord(DnsSection.ANSWER, new DefaultDnsRawRecord(question.name(), question.type(), ttl, Bufs.copied(ip)));
                }
            }
        }
        ctx.writeAndFlush(r);
    }

    @AfterEach
    void stop() throws Exception {
        server.close().sync();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    private String serverAddress() {
        return "127.0.0.1:" + ((InetSocketAddress) server.localAddress()).getPort();
    }

    private int queries(DnsRecordType t) {
        AtomicInteger n = queries.get(t);
        return n == null ? 0 : n.get();
    }

    private static byte[] ip(int last) {
        return new byte[] {127, 0, 0, (byte) last};
    }

    /** The fake clock, safe to share with the event loop that schedules on it. */
    static final class LockedScheduler implements Scheduler {
        final ManualScheduler clock = new ManualScheduler();

        @Override
        public Ticker ticker() {
            return clock;
        }

        @Override
        public synchronized Cancellable schedule(Runnable task, long delayNanos) {
            Cancellable c = clock.schedule(task, delayNanos);
            return () -> {
                synchronized (this) {
                    return c.cancel();
                }
            };
        }

        synchronized void advanceMillis(long ms) {
            clock.advanceNanos(TimeUnit.MILLISECONDS.toNanos(ms));
        }

        synchronized int pending() {
            return clock.pendingTasks();
        }
    }

    /** Records what the source publishes. */
    static final class Recorder implements HostSource.Sink {
        final BlockingQueue<List<DiscoveredHost>> lists = new LinkedBlockingQueue<>();
        final BlockingQueue<String> states = new LinkedBlockingQueue<>();

        @Override
        public void hosts(List<DiscoveredHost> hosts) {
            lists.add(hosts);
        }

        @Override
        public void state(String state, boolean connected) {
            states.add((connected ? "up " : "down ") + state);
        }

        List<String> nextAddresses() throws InterruptedException {
            List<DiscoveredHost> l = lists.poll(5, TimeUnit.SECONDS);
            assertThat(l).as("a published host list").isNotNull();
            return l.stream().map(DiscoveredHost::address).toList();
        }
    }

    @Test
    void reResolvesOnTheTtlKeepsHostsOnFailureAndBacksOff() throws Exception {
        answer = List.of(ip(1), ip(2));
        ttl = 7;
        LockedScheduler sched = new LockedScheduler();
        Recorder sink = new Recorder();
        EventLoopGroup loop = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        DnsHostSource src = new DnsHostSource(DiscoveryConfig.dns("svc.test:8080", serverAddress())
                .withRefresh(Duration.ofSeconds(1), Duration.ofSeconds(30)), loop.next(), NioDatagramChannel.class, sched);
        try {
            src.start(sink);
            assertThat(sink.nextAddresses()).containsExactly("127.0.0.1:8080", "127.0.0.2:8080");
            assertThat(sink.states.poll(1, TimeUnit.SECONDS)).startsWith("up resolving svc.test.");
            await().atMost(Duration.ofSeconds(5)).until(() -> sched.pending() == 1);
            int a = queries(DnsRecordType.A);

            // the TTL (7 s) decides when it asks again: not at 6.999 s, at 7 s
            answer = List.of(ip(1), ip(2), ip(3));
            sched.advanceMillis(6_999);
            assertThat(queries(DnsRecordType.A)).isEqualTo(a);
            assertThat(sched.pending()).isEqualTo(1);
            sched.advanceMillis(1);
            assertThat(sink.nextAddresses()).containsExactly("127.0.0.1:8080", "127.0.0.2:8080", "127.0.0.3:8080");
            assertThat(queries(DnsRecordType.A)).isEqualTo(a + 1);

            // SERVFAIL: no list (the gateway keeps its hosts), one state change, retries after 1 s, then 2 s
            await().atMost(Duration.ofSeconds(5)).until(() -> sched.pending() == 1);
            rcode = DnsResponseCode.SERVFAIL;
            sched.advanceMillis(7_000);
            assertThat(sink.states.poll(5, TimeUnit.SECONDS)).isEqualTo("down failing (2: SERVFAIL)".replace("2: SERVFAIL", DnsResponseCode.SERVFAIL.toString()));
            await().atMost(Duration.ofSeconds(5)).until(() -> sched.pending() == 1);
            int failedA = queries(DnsRecordType.A);
            sched.advanceMillis(999);
            assertThat(queries(DnsRecordType.A)).isEqualTo(failedA);
            sched.advanceMillis(1);
            await().atMost(Duration.ofSeconds(5)).until(() -> queries(DnsRecordType.A) == failedA + 1 && sched.pending() == 1);
            sched.advanceMillis(1_999); // backoff doubled: 2 s
            assertThat(queries(DnsRecordType.A)).isEqualTo(failedA + 1);
            assertThat(sink.lists).isEmpty();

            // recovers: one state change, the new answer; a TTL of 0 counts as refresh_min (1 s)
            rcode = DnsResponseCode.NOERROR;
            ttl = 0;
            sched.advanceMillis(1);
            assertThat(sink.nextAddresses()).hasSize(3);
            assertThat(sink.states.poll(5, TimeUnit.SECONDS)).startsWith("up resolving");
            await().atMost(Duration.ofSeconds(5)).until(() -> sched.pending() == 1);
            int okA = queries(DnsRecordType.A);
            sched.advanceMillis(999);
            assertThat(queries(DnsRecordType.A)).isEqualTo(okA);

            // NXDOMAIN: an empty list (the cluster's allow_empty decides)
            rcode = DnsResponseCode.NXDOMAIN;
            sched.advanceMillis(1);
            assertThat(sink.nextAddresses()).isEmpty();
        } finally {
            src.close();
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void aDnsClusterServesThroughTheGateway() throws Exception {
        try (TestBackend backend = TestBackend.start()) {
            answer = List.of(ip(1));
            ttl = 30;
            ClusterConfig c = ClusterConfig.builder().name("svc")
                    .discovery(DiscoveryConfig.dns("svc.test:" + backend.port(), serverAddress())).build();
            GatewayConfig config = GatewayFixture.simple(List.of(), io.sluice.core.config.HttpOptions.defaults())
                    .toBuilder().clusters(c).listeners(ListenerConfig.builder().name("web").routes(RouteConfig.to("svc")).build())
                    .build();
            try (Gateway gw = GatewayFixture.start(config)) {
                await().atMost(Duration.ofSeconds(5)).until(() -> gw.cluster("svc").hosts().size() == 1);
                assertThat(gw.cluster("svc").hosts().get(0).origin()).isEqualTo("dns");
                HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                                URI.create("http://127.0.0.1:" + gw.port("web") + "/x")).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(r.body()).contains("ok from " + backend.port());
            }
        }
    }
}
