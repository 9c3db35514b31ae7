package io.sluice.server;

import com.alipay.remoting.BizContext;
import com.alipay.remoting.rpc.RpcClient;
import com.alipay.remoting.rpc.RpcResponseFuture;
import com.alipay.remoting.rpc.RpcServer;
import com.alipay.remoting.rpc.protocol.SyncUserProcessor;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.LbPolicy;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.testing.Ports;
import io.sluice.server.testing.RawClient;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Reloads that move, add and remove listeners: the new socket is bound before anything changes,
 * the old one stops accepting and drains (requests in flight finish, HTTP connections are told
 * {@code Connection: close}, Bolt pending requests are answered), and a socket that cannot be
 * bound rejects the reload. Real sockets throughout.
 */
class ListenerReloadIT {

    private final HttpClient http = HttpClient.newHttpClient();

    private static ListenerConfig web(String name, int port) {
        return new ListenerConfig(name, Protocol.HTTP, "127.0.0.1", port, List.of(RouteConfig.to("c")),
                HttpOptions.defaults(), null);
    }

    private static GatewayConfig config(TestBackend b, ListenerConfig... listeners) {
        return new GatewayConfig(List.of(listeners), List.of(ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", b.port(), 1)))),
                new AdminConfig(true, "127.0.0.1", 0), new TransportConfig("auto", 1, 128), Duration.ofSeconds(5));
    }

    private static Gateway start(GatewayConfig c) {
        return Gateway.builder().config(c).random(new SplittableRandom(7)).build().start().orTimeout(30, TimeUnit.SECONDS).join();
    }

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private String metrics(Gateway g) throws Exception {
        return get(g.adminAddress().getPort(), "/metrics").body();
    }

    @Test
    void movedHttpListenerBindsTheNewPortAndDrainsTheOld() throws Exception {
        int a = Ports.free();
        int b = Ports.freeExcept(a);
        try (TestBackend backend = TestBackend.start(); Gateway g = start(config(backend, web("web", a)))) {
            RawClient idle = new RawClient(a);
            RawClient inFlight = new RawClient(a);
            try (idle; inFlight) {
                assertThat(idle.send("GET /x HTTP/1.1\r\nHost: t\r\n\r\n").read().status()).isEqualTo(200);
                // a request whose response can only come after the rest of its body, sent after the reload
                inFlight.send("POST /count HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
                await().atMost(Duration.ofSeconds(5)).until(() -> backend.requests() == 2);

                ReloadResult r = g.reload(config(backend, web("web", b)));
                assertThat(r.listenersChanged()).containsExactly("web");
                assertThat(g.port("web")).isEqualTo(b);
                assertThat(get(b, "/x").body()).isEqualTo("ok from " + backend.port());
                await().atMost(Duration.ofSeconds(5)).until(() -> Ports.refuses(a));

                assertThat(idle.closedByPeer()).as("idle keep-alive connection on the old socket is closed").isTrue();
                RawClient.Response done = inFlight.send("5\r\nworld\r\n0\r\n\r\n").read();
                assertThat(done.status()).isEqualTo(200);
                assertThat(done.body()).startsWith("bytes=10 ");
                assertThat(done.hasHeader("connection: close")).isTrue();
                assertThat(inFlight.closedByPeer()).isTrue();
            }
            await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(metrics(g))
                    .containsPattern("sluice_downstream_connections_closed_total\\{listener=\"web\",protocol=\"http\",reason=\"drain\"} [1-9]"));
            String page = get(g.adminAddress().getPort(), "/").body();
            assertThat(page).contains("127.0.0.1:" + b).doesNotContain("127.0.0.1:" + a + "<");
        }
    }

    @Test
    void listenersAreAddedAndRemovedAndAnUnbindableOneRejectsTheReload() throws Exception {
        try (TestBackend backend = TestBackend.start(); Gateway g = start(config(backend, web("web", 0)))) {
            g.reload(config(backend, web("web", 0), web("extra", 0)));
            int extra = g.port("extra");
            assertThat(get(extra, "/x").statusCode()).isEqualTo(200);
            assertThat(metrics(g)).contains("listener=\"extra\"");

            g.reload(config(backend, web("web", 0)));
            await().atMost(Duration.ofSeconds(5)).until(() -> Ports.refuses(extra));
            assertThat(get(g.port("web"), "/x").statusCode()).isEqualTo(200);
            await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(metrics(g)).doesNotContain("listener=\"extra\""));

            long version = g.configVersion();
            GatewayConfig before = g.config();
            try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
                int port = taken.getLocalPort();
                assertThatThrownBy(() -> g.reload(config(backend, web("web", 0), web("late", port))))
                        .isInstanceOf(ConfigException.class)
                        .hasMessageContaining("$.listeners[1].port").hasMessageContaining(String.valueOf(port));
            }
            assertThat(g.configVersion()).isEqualTo(version);
            assertThat(g.config()).isSameAs(before);
            assertThat(get(g.port("web"), "/x").statusCode()).isEqualTo(200);
            assertThat(metrics(g)).doesNotContain("listener=\"late\"");
        }
    }

    @Test
    void movedBoltListenerAnswersItsPendingRequests() throws Exception {
        RpcServer slow = new RpcServer("127.0.0.1", 0, true);
        slow.registerUserProcessor(new SyncUserProcessor<String>() {
            @Override
            public Object handleRequest(BizContext ctx, String req) throws Exception {
                Thread.sleep(Long.parseLong(req.substring("sleep:".length())));
                return "slept";
            }

            @Override
            public String interest() {
                return String.class.getName();
            }
        });
        slow.startup();
        RpcClient client = new RpcClient();
        client.startup();
        ClusterConfig cluster = ClusterConfig.builder().name("slow").protocol(Protocol.BOLT).lb(LbPolicy.ROUND_ROBIN)
                .hosts(new HostConfig("127.0.0.1", slow.port(), 1)).connectTimeout(Duration.ofSeconds(2))
                .responseTimeout(Duration.ofSeconds(5)).build();
        int a = Ports.free();
        int b = Ports.freeExcept(a);
        IntFunction<GatewayConfig> at = port -> new GatewayConfig(List.of(new ListenerConfig("bolt",
                Protocol.BOLT, "127.0.0.1", port, List.of(), null, new BoltOptions(4 << 20, Duration.ofSeconds(90), "slow"))),
                List.of(cluster), AdminConfig.disabled(), new TransportConfig("auto", 1, 128), Duration.ofSeconds(5));
        try (Gateway g = start(at.apply(a))) {
            RpcResponseFuture pending = client.invokeWithFuture("127.0.0.1:" + a, "sleep:700", 5000);
            await().atMost(Duration.ofSeconds(5)).until(() -> g.activeRequests() == 1);
            g.reload(at.apply(b));
            assertThat(g.port("bolt")).isEqualTo(b);
            assertThat(client.invokeSync("127.0.0.1:" + b, "sleep:1", 5000)).isEqualTo("slept");
            assertThat(pending.get(5000)).as("the request pending on the old socket is answered").isEqualTo("slept");
            await().atMost(Duration.ofSeconds(5)).until(() -> Ports.refuses(a));
        } finally {
            client.shutdown();
            slow.shutdown();
        }
    }
}
