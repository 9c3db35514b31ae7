package io.sluice.server.http;

import io.sluice.codec.testing.Bufs;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.EventExecutor;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.time.ManualScheduler;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.LbContext;
import io.sluice.server.channel.DrainEvent;
import io.sluice.server.metrics.ListenerMetrics;
import io.sluice.server.metrics.RequestOutcome;
import io.sluice.server.route.RouteTable;
import io.sluice.server.testing.EmbeddedUpstreams;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.io.IOException;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static io.sluice.server.testing.EmbeddedUpstreams.drainText;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every timeout of {@link HttpProxyHandler}, on a fake clock: the handler runs in an
 * {@link EmbeddedChannel} with the listener's scheduler replaced by a {@link ManualScheduler};
 * upstream connections are embedded channels carrying the pool's real pipeline. Each timeout is
 * shown not to fire 1 ns before its deadline and to fire exactly at it.
 */
@Timeout(10)
class HttpProxyTimeoutTest {

    static final Duration IDLE = Duration.ofSeconds(5);
    static final Duration HEAD = Duration.ofSeconds(1);
    static final Duration CONNECT = Duration.ofMillis(250);
    static final Duration RESPONSE = Duration.ofMillis(400);
    static final Duration BODY = Duration.ofMillis(700);
    static final Duration WRITE = Duration.ofMillis(900);
    static final Duration GRACE = Duration.ofMillis(300);
    static final String GET = "GET /x HTTP/1.1\r\nHost: a\r\n\r\n";
    static final String OK = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

    final ManualScheduler clock = new ManualScheduler(1_000_000_000L);
    final EmbeddedUpstreams upstreams = new EmbeddedUpstreams();
    final Map<EventExecutor, HttpUpstreamPool> pools = new IdentityHashMap<>();
    final ListenerMetrics metrics = new ListenerMetrics(new SimpleMeterRegistry(), "web", "http");
    HttpListenerContext lc;
    final RouteTable routes;
    EmbeddedChannel client;
    /** Every request-end event, as "OUTCOME status". */
    final List<String> ends = new ArrayList<>();
    /** The cluster's pool idle timeout (its default). */
    final Duration poolIdle;

    HttpProxyTimeoutTest() {
        ClusterConfig cc = ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", 8080, 1)))
                .withTimeouts(CONNECT, RESPONSE);
        poolIdle = cc.pool().idleTimeout();
        ClusterBalancer c = ClusterBalancer.create(cc, new LbContext(clock, new SplittableRandom(1)));
        RouteTable routes = RouteTable.compile(List.of(RouteConfig.to("c")), Map.of("c", c));
        HttpOptions o = HttpOptions.builder().idleTimeout(IDLE).requestHeaderTimeout(HEAD).xForwarded(false)
                .requestBodyTimeout(BODY).writeTimeout(WRITE).drainGrace(GRACE)
                .minRequestBodyRate(0).build(); // the rate rule's own tests turn it on (minRate)
        this.routes = routes;
        lc = new HttpListenerContext("web", routes, o, metrics,
                e -> pools.computeIfAbsent(e, l -> new HttpUpstreamPool((EventLoop) l, clock, upstreams.template((EventLoop) l), n -> null)),
                e -> clock);
        lc.tap(e -> ends.add(e.outcome + " " + e.status));
        client = EmbeddedChannel.builder().register(false).build();
        new HttpServerInitializer(lc, null).configure(client);
    }

    private void connectClient() throws Exception {
        client.register(); // channelActive: the idle timer starts now
    }

    private void send(String s) {
        client.writeInbound(Bufs.copied(s));
        client.runPendingTasks(); // connects and flushes queued on the loop
    }

    private void advance(Duration d) {
        clock.advance(d);
        client.runPendingTasks();
    }

    private void advanceNanos(long n) {
        clock.advanceNanos(n);
        client.runPendingTasks();
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

    // ---------------------------------------------------------------- the request-end event

    @Test
    void requestEndIsReportedOnceForAProxiedExchange() throws Exception {
        connectClient();
        send(GET);
        EmbeddedChannel up = upstreams.last();
        drainText(up);
        assertThat(ends).isEmpty();
        up.writeInbound(Bufs.copied(OK));
        client.runPendingTasks();
        assertThat(drainText(client)).startsWith("HTTP/1.1 200 ");
        assertThat(ends).containsExactly("PROXIED 200");
        send(GET);
        drainText(up);
        up.writeInbound(Bufs.copied(OK));
        client.runPendingTasks();
        drainText(client);
        assertThat(ends).containsExactly("PROXIED 200", "PROXIED 200");
    }

    @Test
    void requestEndIsReportedOnceForEachGatewayMadeError() throws Exception {
        connectClient();
        send("GET /x HTTP/1.1\r\n\r\n"); // no Host
        assertThat(drainText(client)).startsWith("HTTP/1.1 400 ");
        assertThat(ends).containsExactly("BAD_REQUEST 400");
    }

    @Test
    void requestEndForAMalformedRequest() throws Exception {
        connectClient();
        send("GET /x\u0001 HTTP/1.1\r\nHost: a\r\n\r\n");
        assertThat(drainText(client)).startsWith("HTTP/1.1 400 ");
        assertThat(ends).containsExactly("BAD_REQUEST 400");
    }

    @Test
    void requestEndForOversizedHeads() throws Exception {
        connectClient();
        send("GET /" + "a".repeat(70_000) + " HTTP/1.1\r\nHost: a\r\n\r\n");
        assertThat(drainText(client)).startsWith("HTTP/1.1 414 ");
        assertThat(ends).containsExactly("URI_TOO_LONG 414");
    }

    @Test
    void requestEndForTooLargeHeaders() throws Exception {
        connectClient();
        send("GET /x HTTP/1.1\r\nHost: a\r\nX-Big: " + "b".repeat(70_000) + "\r\n\r\n");
        assertThat(drainText(client)).startsWith("HTTP/1.1 431 ");
        assertThat(ends).containsExactly("HEADERS_TOO_LARGE 431");
    }

    @Test
    void requestEndForABodyTimeout() throws Exception {
        connectClient();
        send(SLOW_POST);
        drainText(upstreams.last());
        advance(BODY);
        assertThat(drainText(client)).startsWith("HTTP/1.1 408 ");
        assertThat(ends).containsExactly("BODY_TIMEOUT 408");
    }

    @Test
    void requestEndForTimeouts() throws Exception {
        connectClient();
        send(GET);
        advance(RESPONSE);
        assertThat(drainText(client)).startsWith("HTTP/1.1 504 ");
        assertThat(ends).containsExactly("UPSTREAM_TIMEOUT 504");

        send("GET /x HTTP/1.1\r\n");
        advance(HEAD);
        assertThat(drainText(client)).startsWith("HTTP/1.1 408 ");
        assertThat(ends).containsExactly("UPSTREAM_TIMEOUT 504", "HEADER_TIMEOUT 408");
    }

    @Test
    void requestEndForConnectFailureAndTimeout() throws Exception {
        connectClient();
        upstreams.holdConnects();
        send(GET);
        upstreams.failConnect(new IOException("refused"));
        client.runPendingTasks();
        assertThat(drainText(client)).startsWith("HTTP/1.1 502 ");
        assertThat(ends).containsExactly("CONNECT_FAILURE 502");

        send(GET);
        advance(CONNECT);
        assertThat(drainText(client)).startsWith("HTTP/1.1 504 ");
        assertThat(ends).containsExactly("CONNECT_FAILURE 502", "CONNECT_TIMEOUT 504");
    }

    @Test
    void requestEndWhenTheUpstreamOrTheClientGoes() throws Exception {
        connectClient();
        send(GET);
        upstreams.last().close();
        client.runPendingTasks();
        assertThat(drainText(client)).startsWith("HTTP/1.1 502 ");
        assertThat(ends).containsExactly("UPSTREAM_RESET 502");

        send(GET);
        client.close();
        client.runPendingTasks();
        assertThat(ends).containsExactly("UPSTREAM_RESET 502", "CLIENT_CLOSED 0");
    }

    @Test
    void aParkedUpstreamConnectionIsSweptOnTheSchedulersClock() throws Exception {
        connectClient();
        send(GET);
        EmbeddedChannel up = upstreams.last();
        drainText(up);
        up.writeInbound(Bufs.copied(OK));
        client.runPendingTasks();
        drainText(client);
        HttpUpstreamPool pool = pools.values().iterator().next();
        assertThat(pool.idleCount()).isEqualTo(1);
        long limit = Math.max(1, poolIdle.toNanos() / HttpUpstreamPool.SWEEP_PERIOD_NANOS);
        // parked in sweep generation 0: closed by the sweep of generation `limit`, i.e. `limit` periods on
        advanceNanos(limit * HttpUpstreamPool.SWEEP_PERIOD_NANOS - 1);
        assertThat(pool.idleCount()).isEqualTo(1);
        advanceNanos(1);
        assertThat(pool.idleCount()).isZero();
        up.runPendingTasks();
        assertThat(up.isOpen()).isFalse();
    }

    @Test
    void responseTimeoutAnswers504ExactlyAtTheRouteTimeout() throws Exception {
        connectClient();
        send(GET);
        EmbeddedChannel up = upstreams.last();
        assertThat(drainText(up)).startsWith("GET /x HTTP/1.1\r\n");

        advanceNanos(RESPONSE.toNanos() - 1);
        assertThat(drainText(client)).isEmpty();
        assertThat(up.isOpen()).isTrue();

        advanceNanos(1);
        assertThat(drainText(client)).startsWith("HTTP/1.1 504 ");
        assertThat(up.isOpen()).as("the upstream connection of a timed-out exchange is closed").isFalse();
        assertThat(metrics.count(RequestOutcome.UPSTREAM_TIMEOUT)).isEqualTo(1);
    }

    @Test
    void responseTimeoutCountsFromTheLastRequestByteNotTheHead() throws Exception {
        connectClient();
        send("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nab");
        EmbeddedChannel up = upstreams.last();
        advance(Duration.ofMillis(300)); // the body trickles: no response deadline yet
        send("cd");
        assertThat(drainText(up)).endsWith("abcd");

        advanceNanos(RESPONSE.toNanos() - 1);
        assertThat(drainText(client)).isEmpty();
        advanceNanos(1);
        assertThat(drainText(client)).startsWith("HTTP/1.1 504 ");
    }

    @Test
    void aSecondRequestOnTheConnectionGetsItsOwnFullResponseTimeout() throws Exception {
        connectClient();
        send(GET);
        upstreams.last().writeInbound(Bufs.copied(OK));
        client.runPendingTasks();
        assertThat(drainText(client)).startsWith("HTTP/1.1 200 ");
        drainText(upstreams.last());

        advance(Duration.ofMillis(390)); // the timer armed for the first request is still pending
        send(GET);
        EmbeddedChannel up = upstreams.last();
        assertThat(upstreams.channels).hasSize(1); // the parked connection was reused
        assertThat(drainText(up)).startsWith("GET /x");
        advanceNanos(RESPONSE.toNanos() - 1);
        assertThat(drainText(client)).isEmpty();
        advanceNanos(1);
        assertThat(drainText(client)).startsWith("HTTP/1.1 504 ");
    }

    @Test
    void connectTimeoutAnswers504ExactlyAtTheClusterConnectTimeout() throws Exception {
        upstreams.holdConnects(); // an upstream that never accepts
        connectClient();
        send(GET);
        assertThat(upstreams.pendingConnects()).isEqualTo(1);

        advanceNanos(CONNECT.toNanos() - 1);
        assertThat(drainText(client)).isEmpty();
        advanceNanos(1);
        assertThat(drainText(client)).startsWith("HTTP/1.1 504 ");
        assertThat(metrics.count(RequestOutcome.CONNECT_TIMEOUT)).isEqualTo(1);
        assertThat(metrics.count(RequestOutcome.CONNECT_FAILURE)).isZero();
        assertThat(client.isOpen()).as("keep-alive: the client may send the next request").isTrue();
    }

    @Test
    void aConnectFailingWithConnectTimeoutExceptionIs504NotA502() throws Exception {
        upstreams.holdConnects();
        connectClient();
        send(GET);
        upstreams.failConnect(new ConnectTimeoutException("connection timed out: /127.0.0.1:8080"));
        client.runPendingTasks();
        assertThat(drainText(client)).startsWith("HTTP/1.1 504 ");
        assertThat(metrics.count(RequestOutcome.CONNECT_TIMEOUT)).isEqualTo(1);
        assertThat(metrics.count(RequestOutcome.CONNECT_FAILURE)).isZero();
    }

    @Test
    void aRefusedConnectIs502() throws Exception {
        upstreams.holdConnects();
        connectClient();
        send(GET);
        upstreams.failConnect(new java.net.ConnectException("connection refused"));
        client.runPendingTasks();
        assertThat(drainText(client)).startsWith("HTTP/1.1 502 ");
        assertThat(metrics.count(RequestOutcome.CONNECT_FAILURE)).isEqualTo(1);
    }

    @Test
    void aConnectCompletingAfterItsTimeoutIsParkedNotUsed() throws Exception {
        upstreams.holdConnects();
        connectClient();
        send(GET);
        advance(CONNECT);
        assertThat(drainText(client)).startsWith("HTTP/1.1 504 ");
        upstreams.completeConnect();
        client.runPendingTasks();
        assertThat(drainText(upstreams.last())).as("the timed-out request is not sent late").isEmpty();
        assertThat(pools.values().iterator().next().idleCount()).isEqualTo(1);
    }

    @Test
    void anIdleKeepAliveConnectionClosesExactlyAtTheIdleTimeout() throws Exception {
        connectClient();
        send(GET);
        upstreams.last().writeInbound(Bufs.copied(OK));
        client.runPendingTasks();
        assertThat(drainText(client)).startsWith("HTTP/1.1 200 ");

        advanceNanos(IDLE.toNanos() - 1);
        assertThat(client.isOpen()).isTrue();
        advanceNanos(1);
        assertThat(client.isOpen()).isFalse();
    }

    @Test
    void aNewConnectionThatSendsNothingClosesAtTheIdleTimeout() throws Exception {
        connectClient();
        advanceNanos(IDLE.toNanos() - 1);
        assertThat(client.isOpen()).isTrue();
        advanceNanos(1);
        assertThat(client.isOpen()).isFalse();
        assertThat(drainText(client)).isEmpty();
    }

    @Test
    void aSlowRequestHeadIsAnswered408ExactlyAtTheHeaderTimeout() throws Exception {
        connectClient();
        advance(Duration.ofMillis(100));
        send("GET /x HTTP/1.1\r\nHo");
        advance(Duration.ofMillis(500));
        send("st: a\r\nX-Slow: 1\r\n"); // more bytes do not extend the deadline

        advanceNanos(HEAD.toNanos() - Duration.ofMillis(500).toNanos() - 1);
        assertThat(drainText(client)).isEmpty();
        advanceNanos(1);
        assertThat(drainText(client)).startsWith("HTTP/1.1 408 ");
        assertThat(client.isOpen()).isFalse();
        assertThat(metrics.count(RequestOutcome.HEADER_TIMEOUT)).isEqualTo(1);
        assertThat(upstreams.channels).isEmpty();
    }

    // ------------------------------------------------------------ slow clients: body read, write

    /** Netty fires the writability change as a task of the (shared, embedded) loop: run it. */
    private void writable(EmbeddedChannel ch, boolean on) {
        ch.unsafe().outboundBuffer().setUserDefinedWritability(1, on);
        client.runPendingTasks();
    }

    static final String SLOW_POST = "POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\nabc";

    @Test
    void aStalledRequestBodyIsAnswered408ExactlyAtTheBodyTimeoutAndTheUpstreamClosed() throws Exception {
        connectClient();
        send(SLOW_POST);
        EmbeddedChannel up = upstreams.last();
        assertThat(drainText(up)).endsWith("\r\n\r\nabc");
        advance(Duration.ofMillis(500));
        send("d"); // a byte restarts the body timeout

        advanceNanos(BODY.toNanos() - 1);
        assertThat(drainText(client)).isEmpty();
        assertThat(up.isOpen()).isTrue();
        advanceNanos(1);
        assertThat(drainText(client)).startsWith("HTTP/1.1 408 ").containsIgnoringCase("connection: close");
        assertThat(client.isOpen()).isFalse();
        assertThat(up.isOpen()).as("the upstream connection, cut off mid-body, is closed").isFalse();
        assertThat(metrics.count(RequestOutcome.BODY_TIMEOUT)).isEqualTo(1);
    }

    @Test
    void aStalledBodyAfterTheResponseStartedClosesBothSidesWithout408() throws Exception {
        connectClient();
        send(SLOW_POST);
        EmbeddedChannel up = upstreams.last();
        drainText(up);
        up.writeInbound(Bufs.copied("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhe"));
        client.runPendingTasks();
        assertThat(drainText(client)).startsWith("HTTP/1.1 200 ");

        advanceNanos(BODY.toNanos() - 1);
        assertThat(client.isOpen()).isTrue();
        advanceNanos(1);
        assertThat(drainText(client)).isEmpty();
        assertThat(client.isOpen()).isFalse();
        assertThat(up.isOpen()).isFalse();
        assertThat(metrics.count(RequestOutcome.BODY_TIMEOUT)).isEqualTo(1);
    }

    /** Turns on {@code min_request_body_rate} (bytes per second), as a reload would. */
    private void minRate(long bytesPerSecond) {
        lc.update(routes, lc.options().toBuilder().minRequestBodyRate(bytesPerSecond).build());
    }

    @Test
    void aBodyBelowTheMinimumRateIsAnswered408ExactlyWhenItFallsBehind() throws Exception {
        minRate(1000); // after the grace (BODY = 700 ms from the head), every 1000 bytes buy a second
        connectClient();
        send(SLOW_POST); // 3 body bytes
        EmbeddedChannel up = upstreams.last();
        drainText(up);
        advance(Duration.ofMillis(600));
        send("x".repeat(497)); // 500 bytes: due at head + 700 ms + 500 ms; the idle rule only at + 1300 ms
        drainText(up);

        advanceNanos(Duration.ofMillis(600).toNanos() - 1);
        assertThat(drainText(client)).isEmpty();
        assertThat(up.isOpen()).isTrue();
        advanceNanos(1);
        assertThat(drainText(client)).startsWith("HTTP/1.1 408 ").contains("below the minimum rate of 1000 bytes/s");
        assertThat(client.isOpen()).isFalse();
        assertThat(up.isOpen()).as("the upstream connection, cut off mid-body, is closed").isFalse();
        assertThat(metrics.count(RequestOutcome.BODY_TIMEOUT)).isEqualTo(1);
    }

    @Test
    void aTrickleThatBeatsTheIdleTimeoutStillFallsBelowTheDefaultRate() throws Exception {
        minRate(HttpOptions.DEFAULT_MIN_REQUEST_BODY_RATE); // slowhttptest -B: a few bytes every 10 s, idle rule never fires
        connectClient();
        send(SLOW_POST);
        EmbeddedChannel up = upstreams.last();
        long sent = 3;
        for (int i = 0; i < 100 && client.isOpen(); i++) {
            advance(BODY.dividedBy(2));
            if (client.isOpen()) {
                send("0123456789");
                sent += 10;
            }
            drainText(up);
        }
        assertThat(client.isOpen()).as("cut by the rate rule, not kept open by the trickle").isFalse();
        assertThat(drainText(client)).startsWith("HTTP/1.1 408 ").contains("below the minimum rate");
        assertThat(sent).isLessThan(100);
    }

    @Test
    void theMinimumRateDoesNotCountTimeTheGatewayHoldsReads() throws Exception {
        minRate(1000);
        connectClient();
        send(SLOW_POST); // 3 bytes: due at head + 703 ms
        EmbeddedChannel up = upstreams.last();
        drainText(up);
        advance(Duration.ofMillis(100));
        writable(up, false); // upstream backpressure for 5 s
        advance(Duration.ofSeconds(5));
        assertThat(client.isOpen()).as("the client is not the slow one").isTrue();
        writable(up, true);
        send("y"); // keeps the idle rule away; 4 bytes: due at head + 5 s (held) + 704 ms
        drainText(up);
        advanceNanos(Duration.ofMillis(604).toNanos() - 1);
        assertThat(client.isOpen()).isTrue();
        advanceNanos(1);
        assertThat(drainText(client)).startsWith("HTTP/1.1 408 ").contains("below the minimum rate");
    }

    @Test
    void theBodyTimeoutDoesNotRunWhileTheGatewayHoldsReadsForASlowUpstream() throws Exception {
        connectClient();
        send(SLOW_POST);
        EmbeddedChannel up = upstreams.last();
        drainText(up);
        writable(up, false); // upstream backpressure
        assertThat(client.config().isAutoRead()).isFalse();
        advance(BODY.multipliedBy(3));
        assertThat(client.isOpen()).as("the client is not the slow one").isTrue();

        writable(up, true); // reading resumes: the clock starts again
        assertThat(client.config().isAutoRead()).isTrue();
        advanceNanos(BODY.toNanos() - 1);
        assertThat(client.isOpen()).isTrue();
        advanceNanos(1);
        assertThat(drainText(client)).startsWith("HTTP/1.1 408 ");
    }

    @Test
    void aClientThatStopsReadingIsClosedExactlyAtTheWriteTimeoutWithItsUpstream() throws Exception {
        connectClient();
        send(GET);
        EmbeddedChannel up = upstreams.last();
        drainText(up);
        up.writeInbound(Bufs.copied("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\nxxxx"));
        client.runPendingTasks();
        assertThat(drainText(client)).startsWith("HTTP/1.1 200 ");
        writable(client, false); // the client stops reading
        assertThat(up.config().isAutoRead()).as("backpressure: the upstream is not read").isFalse();

        advanceNanos(WRITE.toNanos() - 1);
        assertThat(client.isOpen()).isTrue();
        advanceNanos(1);
        assertThat(client.isOpen()).isFalse();
        assertThat(up.isOpen()).as("the pinned upstream connection is released").isFalse();
        assertThat(metrics.writeTimeouts()).isEqualTo(1);
        assertThat(metrics.count(RequestOutcome.WRITE_TIMEOUT)).isEqualTo(1);
    }

    @Test
    void theWriteTimeoutRestartsWhenTheClientReadsAgain() throws Exception {
        connectClient();
        send(GET);
        EmbeddedChannel up = upstreams.last();
        drainText(up);
        up.writeInbound(Bufs.copied("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\nxxxx"));
        client.runPendingTasks();
        drainText(client);
        writable(client, false);
        advance(WRITE.minusMillis(100));
        writable(client, true); // it read a little
        advance(Duration.ofMillis(50));
        writable(client, false);

        advanceNanos(WRITE.toNanos() - 1);
        assertThat(client.isOpen()).isTrue();
        advanceNanos(1);
        assertThat(client.isOpen()).isFalse();
        assertThat(metrics.writeTimeouts()).isEqualTo(1);
    }

    // ------------------------------------------------------------ drain

    private void drain() {
        lc.startDraining();
        client.pipeline().fireUserEventTriggered(DrainEvent.INSTANCE);
    }

    @Test
    void drainingAnIdleConnectionKeepsItOpenForTheGraceThenClosesIt() throws Exception {
        connectClient();
        advance(Duration.ofMillis(100));
        drain();
        advanceNanos(GRACE.toNanos() - 1);
        assertThat(client.isOpen()).as("a request may be on its way").isTrue();
        advanceNanos(1);
        assertThat(client.isOpen()).isFalse();
        assertThat(drainText(client)).isEmpty();
    }

    @Test
    void aRequestArrivingInTheGraceIsAnsweredWithConnectionCloseThenTheConnectionCloses() throws Exception {
        connectClient();
        drain();
        advanceNanos(GRACE.toNanos() - 1);
        send(GET);
        upstreams.last().writeInbound(Bufs.copied(OK));
        client.runPendingTasks();
        assertThat(drainText(client)).startsWith("HTTP/1.1 200 ").containsIgnoringCase("connection: close").endsWith("ok");
        assertThat(client.isOpen()).isFalse();
        drainText(upstreams.last());
    }

    @Test
    void aRequestInProgressWhenTheDrainStartsFinishesWithConnectionClose() throws Exception {
        connectClient();
        send(GET);
        drain();
        advance(GRACE.plusMillis(50)); // past the grace, which is for idle connections: this one is busy
        assertThat(client.isOpen()).isTrue();
        upstreams.last().writeInbound(Bufs.copied(OK));
        client.runPendingTasks();
        assertThat(drainText(client)).startsWith("HTTP/1.1 200 ").containsIgnoringCase("connection: close");
        assertThat(client.isOpen()).isFalse();
        drainText(upstreams.last());
    }
}
