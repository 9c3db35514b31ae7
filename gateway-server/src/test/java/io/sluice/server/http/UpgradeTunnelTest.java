package io.sluice.server.http;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.EventExecutor;
import io.sluice.codec.testing.Bufs;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.core.config.StringMatch;
import io.sluice.core.config.RouteRules;
import io.sluice.core.time.ManualScheduler;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.LbContext;
import io.sluice.server.metrics.ListenerMetrics;
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
 * {@link UpgradeTunnel} through {@link HttpProxyHandler} on embedded channels and a fake clock:
 * what goes up, the 101 relayed, bytes both ways, the tunnel's own idle timeout (exact on the
 * clock), routes that do not allow the upgrade, and an upstream that declines it.
 */
@Timeout(10)
class UpgradeTunnelTest {

    static final Duration TUNNEL_IDLE = Duration.ofSeconds(3);
    static final Duration RESPONSE = Duration.ofMillis(400);
    static final Duration IDLE = Duration.ofSeconds(5);
    static final String WS = "GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade, X-Secret\r\n"
            + "X-Secret: s\r\nKeep-Alive: 5\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    static final String SWITCHING = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";

    final ManualScheduler clock = new ManualScheduler(1_000_000_000L);
    final EmbeddedUpstreams upstreams = new EmbeddedUpstreams();
    final Map<EventExecutor, HttpUpstreamPool> pools = new IdentityHashMap<>();
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final ListenerMetrics metrics = new ListenerMetrics(registry, "web", "http");
    final List<String> ends = new ArrayList<>();
    final EmbeddedChannel client;

    UpgradeTunnelTest() throws Exception {
        ClusterConfig cc = ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", 8080, 1)))
                .withTimeouts(Duration.ofMillis(250), RESPONSE);
        ClusterBalancer c = ClusterBalancer.create(cc, new LbContext(clock, new SplittableRandom(1)));
        RouteConfig none = new RouteConfig("none", new RouteMatch(List.of(), StringMatch.prefix("/none"), List.of(),
                List.of(), null, null), "c", null, null, null, null, RouteRules.builder().upgrades(List.of()).build());
        RouteConfig h2c = new RouteConfig("h2c", new RouteMatch(List.of(), StringMatch.prefix("/h2c"), List.of(),
                List.of(), null, null), "c", null, null, null, null,
                RouteRules.builder().upgrades(List.of("h2c")).tunnelIdleTimeout(TUNNEL_IDLE).build());
        RouteConfig ws = new RouteConfig("ws", RouteMatch.ANY, "c", null, null, null, null,
                RouteRules.builder().tunnelIdleTimeout(TUNNEL_IDLE).build());
        RouteTable routes = RouteTable.compile(List.of(none, h2c, ws), Map.of("c", c));
        HttpOptions o = HttpOptions.builder().idleTimeout(IDLE).xForwarded(false).minRequestBodyRate(0).build();
        HttpListenerContext lc = new HttpListenerContext("web", routes, o, metrics,
                e -> pools.computeIfAbsent(e, l -> new HttpUpstreamPool((EventLoop) l, clock, upstreams.template((EventLoop) l), n -> null)),
                e -> clock);
        lc.tap(e -> ends.add(e.outcome + " " + e.status + " " + e.bytesOut));
        client = EmbeddedChannel.builder().register(false).build();
        new HttpServerInitializer(lc, null).configure(client);
        client.register();
    }

    @AfterEach
    void tearDown() {
        for (HttpUpstreamPool p : pools.values()) {
            p.closeAll();
        }
        client.runPendingTasks();
        client.finishAndReleaseAll();
        upstreams.finishAll();
    }

    private void send(String s) {
        client.writeInbound(Bufs.copied(s));
        client.runPendingTasks();
    }

    private void reply(EmbeddedChannel up, String s) {
        up.writeInbound(Bufs.copied(s));
        up.runPendingTasks();
        client.runPendingTasks();
    }

    private double active() {
        return registry.get("sluice.upgrades.active").gauge().value();
    }

    @Test
    void upgradeGoesUpWithItsHeadersOnlyAnd101StartsATunnel() {
        send(WS);
        EmbeddedChannel up = upstreams.last();
        String sent = drainText(up);
        assertThat(sent).startsWith("GET /ws HTTP/1.1\r\n").contains("\r\nUpgrade: websocket\r\n")
                .contains("\r\nConnection: Upgrade\r\n").contains("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==")
                .contains("Sec-WebSocket-Version: 13").doesNotContain("X-Secret").doesNotContain("Keep-Alive")
                .doesNotContain("keep-alive");
        // the upstream answers the 101 and its first frame in one read
        reply(up, SWITCHING + "from-upstream");
        String relayed = drainText(client);
        assertThat(relayed).startsWith("HTTP/1.1 101 Switching Protocols\r\n").contains("\r\nUpgrade: websocket\r\n")
                .contains("\r\nConnection: Upgrade\r\n").contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n")
                .endsWith("\r\n\r\nfrom-upstream");
        assertThat(active()).isEqualTo(1.0);
        assertThat(registry.get("sluice.upgrades").counter().count()).isEqualTo(1.0);

        send("GET / HTTP/1.1\r\n\r\n not http at all");
        assertThat(drainText(up)).isEqualTo("GET / HTTP/1.1\r\n\r\n not http at all"); // opaque bytes
        reply(up, "HTTP/1.1 200 OK\r\n\r\n");
        assertThat(drainText(client)).isEqualTo("HTTP/1.1 200 OK\r\n\r\n");
        assertThat(ends).isEmpty(); // the request lasts as long as the tunnel

        // an active tunnel outlives the response timeout and the HTTP idle timeout
        clock.advance(RESPONSE.plus(IDLE));
        client.runPendingTasks();
        assertThat(client.isActive()).isFalse(); // ...but not its own idle timeout (3 s < 5.4 s)
        // bytes the tunnel carried to the client (the 101 head not counted)
        assertThat(ends).containsExactly("PROXIED 101 " + ("from-upstream".length() + "HTTP/1.1 200 OK\r\n\r\n".length()));
    }

    @Test
    void tunnelIdleTimeoutFiresExactlyAtItsDeadlineAfterTheLastByte() {
        send(WS);
        EmbeddedChannel up = upstreams.last();
        drainText(up);
        reply(up, SWITCHING);
        drainText(client);
        clock.advance(Duration.ofSeconds(2));
        client.runPendingTasks();
        send("ping"); // activity re-starts the idle clock
        assertThat(drainText(up)).isEqualTo("ping");
        clock.advance(TUNNEL_IDLE.minusNanos(1));
        client.runPendingTasks();
        assertThat(client.isActive()).as("1 ns before the deadline").isTrue();
        assertThat(up.isActive()).isTrue();
        clock.advanceNanos(1);
        client.runPendingTasks();
        up.runPendingTasks();
        assertThat(client.isActive()).isFalse();
        assertThat(up.isActive()).isFalse();
        assertThat(active()).isEqualTo(0.0);
        assertThat(ends).hasSize(1);
        assertThat(ends.get(0)).startsWith("PROXIED 101 ");
    }

    @Test
    void upstreamCloseClosesTheClientAndTheConnectionIsNeverPooled() {
        send(WS);
        EmbeddedChannel up = upstreams.last();
        drainText(up);
        reply(up, SWITCHING);
        drainText(client);
        up.close();
        up.runPendingTasks();
        client.runPendingTasks();
        assertThat(client.isActive()).isFalse();
        assertThat(pools.values().iterator().next().idleCount()).isZero();
        assertThat(active()).isEqualTo(0.0);
    }

    @Test
    void routeWithoutTheUpgradeSendsAPlainRequest() {
        send(WS.replace("/ws", "/none"));
        EmbeddedChannel up = upstreams.last();
        String sent = drainText(up);
        assertThat(sent).doesNotContain("Upgrade").doesNotContain("Connection");
        reply(up, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nplain");
        assertThat(drainText(client)).startsWith("HTTP/1.1 200 ").endsWith("plain");
        assertThat(ends).containsExactly("PROXIED 200 5");
        // a websocket request on a route that allows only h2c: plain too; a list is reduced to the route's type
        send(WS.replace("/ws", "/h2c").replace("Upgrade: websocket", "Upgrade: websocket, h2c"));
        assertThat(drainText(up)).contains("\r\nUpgrade: h2c\r\n").doesNotContain("websocket");
    }

    @Test
    void upstreamDecliningTheUpgradeGivesAPlainResponseAndAReusableConnection() {
        send(WS);
        EmbeddedChannel up = upstreams.last();
        drainText(up);
        reply(up, "HTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\n\r\nno");
        assertThat(drainText(client)).startsWith("HTTP/1.1 403 ").endsWith("no");
        assertThat(ends).containsExactly("PROXIED 403 2");
        assertThat(pools.values().iterator().next().idleCount()).isEqualTo(1);
        send("GET /x HTTP/1.1\r\nHost: a\r\n\r\n"); // reads go on after a declined upgrade
        assertThat(drainText(up)).startsWith("GET /x HTTP/1.1\r\n");
        assertThat(active()).isEqualTo(0.0);
    }
}
