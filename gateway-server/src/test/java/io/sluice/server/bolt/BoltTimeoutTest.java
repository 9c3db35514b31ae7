package io.sluice.server.bolt;

import io.sluice.codec.testing.Bufs;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.EventExecutor;
import io.sluice.codec.bolt.BoltFrame;
import io.sluice.codec.bolt.BoltFrameDecoder;
import io.sluice.codec.bolt.BoltFrames;
import io.sluice.codec.bolt.BoltFraming;
import io.sluice.codec.bolt.BoltStatus;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.time.ManualScheduler;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.LbContext;
import io.sluice.server.metrics.ListenerMetrics;
import io.sluice.server.metrics.RequestOutcome;
import io.sluice.server.route.RouteTable;
import io.sluice.server.testing.EmbeddedUpstreams;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Bolt request timeout on a fake clock: {@link BoltProxyHandler} in an {@link EmbeddedChannel},
 * its upstream connection an embedded channel with the real {@link BoltUpstreamConnection}
 * pipeline, the listener's scheduler a {@link ManualScheduler}. A request's timeout is its own
 * {@code timeout} field capped by the cluster's response timeout; the answer is a TIMEOUT response
 * carrying the client's request id, exactly at the deadline.
 */
@Timeout(10)
class BoltTimeoutTest {

    static final Duration CAP = Duration.ofMillis(300);
    static final ByteBufAllocator ALLOC = Bufs.ALLOC;

    final ManualScheduler clock = new ManualScheduler(5_000_000_000L);
    final EmbeddedUpstreams upstreams = new EmbeddedUpstreams();
    final Map<EventExecutor, BoltUpstreamPool> pools = new IdentityHashMap<>();
    final ListenerMetrics metrics = new ListenerMetrics(new SimpleMeterRegistry(), "rpc", "bolt");
    final EmbeddedChannel client;
    /** Every request-end event, as "OUTCOME status". */
    final List<String> ends = new ArrayList<>();

    BoltTimeoutTest() throws Exception {
        ClusterConfig cc = ClusterConfig.of("rpc", List.of(new HostConfig("127.0.0.1", 12200, 1)))
                .withProtocol(Protocol.BOLT).withTimeouts(Duration.ofSeconds(1), CAP);
        ClusterBalancer c = ClusterBalancer.create(cc, new LbContext(clock, new SplittableRandom(1)));
        BoltOptions o = new BoltOptions(1 << 20, Duration.ofSeconds(90), "rpc");
        BoltListenerContext lc = new BoltListenerContext("rpc", RouteTable.compile(List.of(), Map.of()), o, c, metrics,
                e -> pools.computeIfAbsent(e, l -> new BoltUpstreamPool((EventLoop) l, upstreams.template((EventLoop) l),
                        o.maxFrameLength(), clock, null)),
                e -> clock);
        lc.tap(e -> ends.add(e.outcome + " " + e.status));
        client = EmbeddedChannel.builder().register(false).build();
        new BoltServerInitializer(lc, null).configure(client);
        client.register();
    }

    @AfterEach
    void tearDown() {
        pools.values().forEach(BoltUpstreamPool::closeAll);
        client.runPendingTasks();
        responses(); // the CONNECTION_CLOSED answers of whatever was still pending
        assertThat(client.finishAndReleaseAll()).isFalse();
        upstreams.finishAll();
    }

    private void request(int id, int timeoutMillis) {
        ByteBuf body = ALLOC.buffer().writeByte(2).writeBytes(new byte[]{'h', 'i'});
        BoltFrame f = BoltFrames.request(ALLOC, BoltFraming.V1, false, id, 1, timeoutMillis, "java.lang.String",
                Map.of("service", "com.example.Echo"), body);
        body.release();
        client.writeInbound(f.takeBytes());
        client.runPendingTasks();
    }

    private void advanceNanos(long n) {
        clock.advanceNanos(n);
        client.runPendingTasks();
    }

    /** The responses the client received so far, as (request id, status) pairs. */
    private List<int[]> responses() {
        EmbeddedChannel decoder = new EmbeddedChannel(new BoltFrameDecoder(1 << 20));
        Object o;
        while ((o = client.readOutbound()) != null) {
            decoder.writeInbound(o);
        }
        List<int[]> out = new ArrayList<>();
        while ((o = decoder.readInbound()) != null) {
            BoltFrame f = (BoltFrame) o;
            out.add(new int[]{f.requestId(), f.status()});
            ReferenceCountUtil.release(f);
        }
        decoder.finishAndReleaseAll();
        return out;
    }

    @Test
    void requestEndIsReportedOnceForAProxiedRequest() {
        request(5, 1000);
        EmbeddedChannel up = upstreams.last();
        EmbeddedChannel decoder = new EmbeddedChannel(new BoltFrameDecoder(1 << 20));
        Object o;
        while ((o = up.readOutbound()) != null) {
            decoder.writeInbound(o);
        }
        BoltFrame sent = decoder.readInbound();
        int upstreamId = sent.requestId();
        sent.release();
        decoder.finishAndReleaseAll();
        up.writeInbound(BoltFrames.errorResponse(ALLOC, BoltFraming.V1, upstreamId, BoltStatus.NO_PROCESSOR, "upstream's own answer")
                .takeBytes()); // any status the upstream sends is proxied
        client.runPendingTasks();
        List<int[]> r = responses();
        assertThat(r).hasSize(1);
        assertThat(r.get(0)).containsExactly(5, BoltStatus.NO_PROCESSOR);
        assertThat(ends).containsExactly("PROXIED " + BoltStatus.NO_PROCESSOR);
        assertThat(metrics.count(RequestOutcome.PROXIED)).isEqualTo(1);
    }

    @Test
    void requestEndIsReportedOnceForATimeoutAndNotForHeartbeats() {
        client.writeInbound(BoltFrames.heartbeat(ALLOC, BoltFraming.V1, 9).takeBytes());
        assertThat(responses()).hasSize(1);
        request(77, 100);
        upstreams.last().releaseOutbound();
        advanceNanos(Duration.ofMillis(100).toNanos());
        assertThat(responses()).hasSize(1);
        assertThat(ends).containsExactly("UPSTREAM_TIMEOUT " + BoltStatus.TIMEOUT);
    }

    @Test
    void requestEndWhenTheUpstreamConnectionIsLost() {
        request(3, 1000);
        EmbeddedChannel up = upstreams.last();
        up.releaseOutbound();
        up.close();
        client.runPendingTasks();
        List<int[]> r = responses();
        assertThat(r).hasSize(1);
        assertThat(r.get(0)).containsExactly(3, BoltStatus.CONNECTION_CLOSED);
        assertThat(ends).containsExactly("UPSTREAM_RESET " + BoltStatus.CONNECTION_CLOSED);
    }

    @Test
    void requestEndForACodecError() {
        ByteBuf bad = ALLOC.buffer().writeByte(1).writeByte(1).writeShort(1).writeByte(1).writeInt(3).writeByte(1)
                .writeInt(0).writeShort(0).writeShort(0).writeInt(1 << 30); // a V1 request announcing a 1 GiB body
        client.writeInbound(bad);
        client.runPendingTasks();
        assertThat(ends).containsExactly("CODEC_ERROR " + BoltStatus.CODEC_EXCEPTION);
    }

    @Test
    void aRequestTimesOutExactlyAtTheClusterCapWithItsOwnRequestId() {
        request(77, 5000); // the request allows 5 s; the cluster caps it at 300 ms
        EmbeddedChannel up = upstreams.last();
        assertThat(up.outboundMessages()).as("forwarded upstream").isNotEmpty();
        up.releaseOutbound();

        advanceNanos(CAP.toNanos() - 1);
        assertThat(responses()).isEmpty();
        advanceNanos(1);
        List<int[]> r = responses();
        assertThat(r).hasSize(1);
        assertThat(r.get(0)).containsExactly(77, BoltStatus.TIMEOUT);
        assertThat(metrics.count(RequestOutcome.UPSTREAM_TIMEOUT)).isEqualTo(1);
    }

    @Test
    void eachRequestTimesOutAtItsOwnShorterTimeoutInDeadlineOrder() {
        request(1, 200);
        advanceNanos(Duration.ofMillis(50).toNanos());
        request(2, 100); // due at 150 ms, before request 1's 200 ms
        upstreams.last().releaseOutbound();

        advanceNanos(Duration.ofMillis(100).toNanos() - 1); // t = 150 ms - 1 ns
        assertThat(responses()).isEmpty();
        advanceNanos(1);
        List<int[]> r = responses();
        assertThat(r).hasSize(1);
        assertThat(r.get(0)).containsExactly(2, BoltStatus.TIMEOUT);

        advanceNanos(Duration.ofMillis(50).toNanos() - 1); // t = 200 ms - 1 ns
        assertThat(responses()).isEmpty();
        advanceNanos(1);
        r = responses();
        assertThat(r).hasSize(1);
        assertThat(r.get(0)).containsExactly(1, BoltStatus.TIMEOUT);
    }
}
