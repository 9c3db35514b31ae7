package io.sluice.server.http;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.EventExecutor;
import io.sluice.codec.testing.Bufs;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.RetryOn;
import io.sluice.core.config.RetryPolicyConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.time.ManualScheduler;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.LbContext;
import io.sluice.server.metrics.ListenerMetrics;
import io.sluice.server.policy.retry.RetryPolicy;
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

import static io.sluice.server.testing.EmbeddedUpstreams.drainText;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Retry timing of {@link HttpProxyHandler} on a fake clock (a {@link ManualScheduler}; upstreams are
 * embedded channels carrying the pool's real pipeline; the back-off jitter is fixed at 0.5): the
 * per-try timeout fires exactly at its deadline, the next attempt starts exactly after the
 * full-jitter back-off, and the route timeout bounds all attempts together.
 */
@Timeout(10)
class HttpRetryTimingTest {

    static final long MS = 1_000_000L;
    static final String GET = "GET /x HTTP/1.1\r\nHost: a\r\n\r\n";
    static final String OK = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

    final ManualScheduler clock = new ManualScheduler(1_000_000_000L);
    final EmbeddedUpstreams upstreams = new EmbeddedUpstreams();
    final Map<EventExecutor, HttpUpstreamPool> pools = new IdentityHashMap<>();
    final List<String> ends = new ArrayList<>();
    EmbeddedChannel client;

    private void start(RetryPolicyConfig policy, Duration routeTimeout) throws Exception {
        ClusterConfig cc = ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", 8080, 1),
                new HostConfig("127.0.0.1", 8081, 1)));
        ClusterBalancer c = ClusterBalancer.create(cc, new LbContext(clock, new SplittableRandom(1)));
        RouteTable routes = RouteTable.compile(List.of(RouteConfig.to("c").withRetryPolicy(policy).withTimeout(routeTimeout)),
                Map.of("c", c));
        HttpOptions o = HttpOptions.builder().xForwarded(false).minRequestBodyRate(0).build();
        HttpListenerContext lc = new HttpListenerContext("web", routes, o,
                new ListenerMetrics(new SimpleMeterRegistry(), "web", "http"),
                e -> pools.computeIfAbsent(e, l -> new HttpUpstreamPool((EventLoop) l, clock, upstreams.template((EventLoop) l), n -> null)),
                e -> clock);
        lc.tap(e -> ends.add(e.outcome + " " + e.status + " attempts=" + e.attempts));
        lc.retryJitter(() -> 0.5);
        client = EmbeddedChannel.builder().register(false).build();
        new HttpServerInitializer(lc, null).configure(client);
        client.register();
    }

    private void send(String s) {
        client.writeInbound(Bufs.copied(s));
        client.runPendingTasks();
    }

    private void advanceNanos(long n) {
        clock.advanceNanos(n);
        client.runPendingTasks();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (client == null) {
            return;
        }
        for (HttpUpstreamPool p : pools.values()) {
            p.closeAll();
        }
        client.runPendingTasks();
        assertThat(client.finishAndReleaseAll()).as("unread client output").isFalse();
        upstreams.finishAll();
    }

    @Test
    void aPerTryTimeoutRetriesExactlyAtItsDeadlineAndAfterTheBackOff() throws Exception {
        start(RetryPolicyConfig.builder().retryOn(RetryOn.FIVE_XX).numRetries(3).perTryTimeout(Duration.ofMillis(100))
                .build(), Duration.ofSeconds(1));
        send(GET);
        EmbeddedChannel first = upstreams.last();
        assertThat(drainText(first)).startsWith("GET /x HTTP/1.1\r\n").doesNotContain("x-sluice-attempt");

        advanceNanos(100 * MS - 1);
        assertThat(first.isActive()).as("1 ns before the per-try timeout").isTrue();
        advanceNanos(1);
        assertThat(first.isActive()).as("at the per-try timeout the attempt is abandoned").isFalse();
        assertThat(upstreams.channels).hasSize(1);

        // retry 1: full jitter over [0, 25 ms), at 0.5 -> 12.5 ms
        advanceNanos(12_500_000L - 1);
        assertThat(upstreams.channels).as("1 ns before the back-off ends").hasSize(1);
        advanceNanos(1);
        assertThat(upstreams.channels).hasSize(2);
        EmbeddedChannel second = upstreams.last();
        assertThat(drainText(second)).startsWith("GET /x HTTP/1.1\r\n").contains("x-sluice-attempt: 2\r\n");
        second.writeInbound(Bufs.copied(OK));
        client.runPendingTasks();
        assertThat(drainText(client)).startsWith("HTTP/1.1 200 ");
        assertThat(ends).containsExactly("PROXIED 200 attempts=2");
    }

    @Test
    void theRouteTimeoutBoundsEveryAttemptAndTheBackOffs() throws Exception {
        start(RetryPolicyConfig.builder().retryOn(RetryOn.FIVE_XX).numRetries(5).perTryTimeout(Duration.ofMillis(100))
                .build(), Duration.ofMillis(250));
        send(GET);
        drainText(upstreams.last());
        advanceNanos(100 * MS);      // attempt 1 times out at 100 ms
        advanceNanos(12_500_000L);   // back-off 12.5 ms: attempt 2 at 112.5 ms, per-try deadline 212.5 ms
        assertThat(upstreams.channels).hasSize(2);
        drainText(upstreams.last());
        advanceNanos(100 * MS - 1);
        assertThat(drainText(client)).isEmpty();
        // at 212.5 ms attempt 2 times out; retry 2 would back off 37.5 ms, past the route's 250 ms: no retry
        advanceNanos(1);
        assertThat(drainText(client)).startsWith("HTTP/1.1 504 ");
        assertThat(upstreams.channels).hasSize(2);
        assertThat(ends).containsExactly("UPSTREAM_TIMEOUT 504 attempts=2");
    }

    @Test
    void a503IsRetriedWithTheSameBodyBytesAfterTheBackOff() throws Exception {
        start(RetryPolicyConfig.builder().retryOn(RetryOn.GATEWAY_ERROR).numRetries(1).build(), Duration.ofSeconds(1));
        send("PUT /doc HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello");
        send(" world");
        EmbeddedChannel first = upstreams.last();
        assertThat(drainText(first)).endsWith("\r\n\r\nhello world");
        first.writeInbound(Bufs.copied("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy"));
        client.runPendingTasks();
        assertThat(drainText(client)).as("a retried 503 is not forwarded").isEmpty();
        assertThat(first.isActive()).isFalse();
        advanceNanos(12_500_000L);
        EmbeddedChannel second = upstreams.last();
        assertThat(second).isNotSameAs(first);
        String sent = drainText(second);
        assertThat(sent).startsWith("PUT /doc HTTP/1.1\r\n").contains("x-sluice-attempt: 2\r\n").endsWith("\r\n\r\nhello world");
        second.writeInbound(Bufs.copied("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy"));
        client.runPendingTasks();
        assertThat(drainText(client)).as("out of retries: the last 503 goes to the client")
                .startsWith("HTTP/1.1 503 ").endsWith("busy");
        assertThat(ends).containsExactly("PROXIED 503 attempts=2");
    }

    @Test
    void aPostIsNotRetriedAfterItWasSentUnlessTheRouteAllowsIt() throws Exception {
        start(RetryPolicyConfig.builder().retryOn(RetryOn.FIVE_XX).numRetries(2).build(), Duration.ofSeconds(1));
        send("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi");
        drainText(upstreams.last());
        upstreams.last().writeInbound(Bufs.copied("HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n"));
        client.runPendingTasks();
        assertThat(drainText(client)).startsWith("HTTP/1.1 500 ");
        assertThat(upstreams.channels).hasSize(1);
        assertThat(ends).containsExactly("PROXIED 500 attempts=1");
    }

    @Test
    void fullJitterBackOffGrowsAndIsCapped() throws Exception {
        RetryPolicy p = RetryPolicy.of(RetryPolicyConfig.builder().retryOn(RetryOn.RESET).numRetries(5).build());
        double almost1 = Math.nextDown(1.0);
        assertThat(p.backoffNanos(1, 0)).isZero();
        assertThat(p.backoffNanos(1, almost1)).isLessThan(25 * MS).isGreaterThan(24 * MS);
        assertThat(p.backoffNanos(2, almost1)).isLessThan(75 * MS).isGreaterThan(74 * MS);
        assertThat(p.backoffNanos(3, almost1)).isLessThan(175 * MS).isGreaterThan(174 * MS);
        assertThat(p.backoffNanos(4, almost1)).as("capped at 10 x base").isLessThan(250 * MS).isGreaterThan(249 * MS);
        assertThat(p.backoffNanos(9, 0.5)).isEqualTo(125 * MS);
        assertThat(p.backoffNanos(2, 0.5)).isEqualTo(37_500_000L);
    }
}
