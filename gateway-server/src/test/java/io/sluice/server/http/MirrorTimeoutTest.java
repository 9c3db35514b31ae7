package io.sluice.server.http;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.EventExecutor;
import io.sluice.codec.testing.Bufs;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.MirrorPolicy;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.core.config.TrafficPolicy;
import io.sluice.core.time.ManualScheduler;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.LbContext;
import io.sluice.server.metrics.ClusterMetrics;
import io.sluice.server.metrics.ListenerMetrics;
import io.sluice.server.route.RouteTable;
import io.sluice.server.testing.EmbeddedUpstreams;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static io.sluice.server.testing.EmbeddedUpstreams.drainText;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A mirror's own timeout on a fake clock: the handler in an {@link EmbeddedChannel} with a
 * {@link ManualScheduler}; primary and shadow connections are embedded channels. The client's
 * exchange completes without the shadow; the shadow's connection is closed exactly at the mirror's
 * deadline, not 1 ns before, and counted {@code timeout} — or {@code sent} once it began answering.
 */
@Timeout(10)
class MirrorTimeoutTest {

    static final Duration MIRROR_TIMEOUT = Duration.ofMillis(300);
    static final String OK = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

    final ManualScheduler clock = new ManualScheduler(1_000_000_000L);
    final EmbeddedUpstreams upstreams = new EmbeddedUpstreams();
    final Map<EventExecutor, HttpUpstreamPool> pools = new IdentityHashMap<>();
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final ClusterMetrics shadowMeters;
    final EmbeddedChannel client;

    MirrorTimeoutTest() {
        LbContext ctx = new LbContext(clock, new SplittableRandom(1));
        ClusterBalancer c = ClusterBalancer.create(ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", 8080, 1))), ctx);
        ClusterBalancer shadow = ClusterBalancer.create(ClusterConfig.of("shadow", List.of(new HostConfig("127.0.0.1", 8081, 1))), ctx);
        shadowMeters = new ClusterMetrics(registry, shadow);
        MirrorPolicy m = new MirrorPolicy("shadow", 100, 1024, 2, MIRROR_TIMEOUT);
        RouteConfig route = new RouteConfig(null, RouteMatch.ANY, "c", null, null, TrafficPolicy.of(null, null, List.of(m)), null, null);
        RouteTable routes = RouteTable.compile(List.of(route), Map.of("c", c, "shadow", shadow));
        HttpOptions o = HttpOptions.builder().xForwarded(false).minRequestBodyRate(0).build();
        HttpListenerContext lc = new HttpListenerContext("web", routes, o, new ListenerMetrics(registry, "web", "http"),
                e -> pools.computeIfAbsent(e, l -> new HttpUpstreamPool((EventLoop) l, clock, upstreams.template((EventLoop) l),
                        n -> n.equals("shadow") ? shadowMeters : null)),
                e -> clock);
        client = EmbeddedChannel.builder().register(false).build();
        new HttpServerInitializer(lc, null).configure(client);
    }

    @AfterEach
    void tearDown() {
        for (HttpUpstreamPool p : pools.values()) {
            p.closeAll();
        }
        client.runPendingTasks();
        assertThat(client.finishAndReleaseAll()).as("unread client output").isFalse();
        upstreams.finishAll();
    }

    private double mirrored(String result) {
        Counter c = registry.find("sluice.mirror.requests").tags("result", result).counter();
        return c == null ? 0 : c.count();
    }

    private void send(String s) {
        client.writeInbound(Bufs.copied(s));
        client.runPendingTasks();
    }

    /** The upstream channel whose first bytes contain {@code marker}; drains every channel it reads. */
    private EmbeddedChannel channelWith(String marker, Map<EmbeddedChannel, String> seen) {
        for (EmbeddedChannel ch : upstreams.channels) {
            seen.merge(ch, drainText(ch), String::concat);
        }
        return seen.entrySet().stream().filter(e -> e.getValue().contains(marker)).map(Map.Entry::getKey)
                .findFirst().orElseThrow();
    }

    @Test
    void theMirrorTimesOutExactlyAtItsDeadlineWithoutTouchingTheClient() throws Exception {
        client.register();
        send("POST /x HTTP/1.1\r\nHost: a:81\r\nContent-Length: 5\r\n\r\nhello");
        Map<EmbeddedChannel, String> seen = new IdentityHashMap<>();
        EmbeddedChannel shadow = channelWith("Host: a-shadow:81\r\n", seen);
        EmbeddedChannel primary = channelWith("Host: a:81\r\n", seen);
        assertThat(seen.get(shadow)).startsWith("POST /x HTTP/1.1\r\n").contains("Connection: close\r\n").endsWith("\r\n\r\nhello");
        primary.writeInbound(Bufs.copied(OK));
        client.runPendingTasks();
        assertThat(drainText(client)).startsWith("HTTP/1.1 200 ").endsWith("ok"); // the client is done; the shadow is silent
        assertThat(shadow.isOpen()).isTrue();

        clock.advanceNanos(MIRROR_TIMEOUT.toNanos() - 1);
        client.runPendingTasks();
        assertThat(shadow.isOpen()).isTrue();
        assertThat(mirrored("timeout")).isZero();
        clock.advanceNanos(1);
        client.runPendingTasks();
        assertThat(shadow.isOpen()).isFalse();
        assertThat(mirrored("timeout")).isEqualTo(1);
    }

    @Test
    void aShadowThatBeganAnsweringCountsAsSentAndItsAnswerIsDiscarded() throws Exception {
        client.register();
        send("GET /y HTTP/1.1\r\nHost: b\r\n\r\n");
        Map<EmbeddedChannel, String> seen = new IdentityHashMap<>();
        EmbeddedChannel shadow = channelWith("Host: b-shadow\r\n", seen);
        EmbeddedChannel primary = channelWith("Host: b\r\n", seen);
        shadow.writeInbound(Bufs.copied("HTTP/1.1 500 Oops\r\nContent-Length: 4\r\n\r\nnope"));
        assertThat(drainText(client)).isEmpty(); // the shadow's answer goes nowhere
        primary.writeInbound(Bufs.copied(OK));
        client.runPendingTasks();
        assertThat(drainText(client)).startsWith("HTTP/1.1 200 ");
        clock.advance(MIRROR_TIMEOUT);
        client.runPendingTasks();
        assertThat(shadow.isOpen()).isFalse();
        assertThat(mirrored("sent")).isEqualTo(1);
        assertThat(mirrored("timeout")).isZero();
    }

    @Test
    void beyondMaxConcurrentMirrorsAreDroppedUntilOneEnds() throws Exception {
        client.register();
        for (int i = 0; i < 3; i++) {
            send("GET /z" + i + " HTTP/1.1\r\nHost: c\r\n\r\n");
            Map<EmbeddedChannel, String> seen = new IdentityHashMap<>();
            channelWith("GET /z" + i + " HTTP/1.1\r\nHost: c\r\n", seen).writeInbound(Bufs.copied(OK));
            client.runPendingTasks();
            assertThat(drainText(client)).startsWith("HTTP/1.1 200 ");
        }
        assertThat(mirrored("dropped")).isEqualTo(1); // max_concurrent 2: the third found both slots taken
        clock.advance(MIRROR_TIMEOUT);
        client.runPendingTasks();
        assertThat(mirrored("timeout")).isEqualTo(2);
        send("GET /again HTTP/1.1\r\nHost: c\r\n\r\n");
        Map<EmbeddedChannel, String> seen = new IdentityHashMap<>();
        assertThat(channelWith("GET /again HTTP/1.1\r\nHost: c-shadow\r\n", seen)).isNotNull(); // slots are free again
        channelWith("GET /again HTTP/1.1\r\nHost: c\r\n", seen).writeInbound(Bufs.copied(OK));
        client.runPendingTasks();
        drainText(client);
    }

    @Test
    void theShadowHostGetsItsSuffixBeforeThePort() throws Exception {
        client.register();
        assertThat(Mirror.shadowHost("shop.example.com")).isEqualTo("shop.example.com-shadow");
        assertThat(Mirror.shadowHost("shop.example.com:8080")).isEqualTo("shop.example.com-shadow:8080");
        assertThat(Mirror.shadowHost("[::1]:8080")).isEqualTo("[::1]-shadow:8080");
        assertThat(Mirror.shadowHost("[::1]")).isEqualTo("[::1]-shadow");
    }
}
