package io.sluice.server;

import com.alipay.remoting.rpc.RpcClient;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.LbPolicy;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.config.ConfigJson;
import io.sluice.server.config.ConfigLoader;
import io.sluice.server.demo.DemoBoltBackend;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Live config reload on real sockets: continuous HTTP and Bolt load across ten reloads through
 * the admin API (hosts added, removed and reweighted, clusters added and removed, routes and the
 * Bolt default cluster changed) without a failed request; a rejected reload; {@code /config} and
 * {@code /healthz}.
 */
class ReloadIT {

    @TempDir
    Path dir;

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private TestBackend b1;
    private TestBackend b2;
    private TestBackend b3;
    private DemoBoltBackend e1;
    private DemoBoltBackend e2;
    private Path file;
    private Gateway gw;

    @BeforeEach
    void start() throws Exception {
        b1 = TestBackend.start();
        b2 = TestBackend.start();
        b3 = TestBackend.start();
        e1 = DemoBoltBackend.start("127.0.0.1", 0);
        e2 = DemoBoltBackend.start("127.0.0.1", 0);
        file = dir.resolve("sluice.json");
        Files.writeString(file, ConfigJson.render(variant(0)));
        gw = Gateway.builder().config(ConfigLoader.load(file).config()).random(new SplittableRandom(7))
                .reloadSource(() -> ConfigLoader.load(file).config()).build().start().orTimeout(30, TimeUnit.SECONDS).join();
    }

    @AfterEach
    void stop() {
        for (AutoCloseable c : new AutoCloseable[] {gw, b1, b2, b3, e1::close, e2::close}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                // best effort
            }
        }
    }

    private static HostConfig h(TestBackend b, int weight) {
        return new HostConfig("127.0.0.1", b.port(), weight);
    }

    private static HostConfig h(DemoBoltBackend b) {
        return new HostConfig("127.0.0.1", b.port(), 1);
    }

    /**
     * Config number {@code k}: HTTP cluster {@code c} cycles through {b1,b2,b3}, {b1:1,b2:3}, {b1:2,b3};
     * cluster {@code api} (b3, route {@code /api/}) exists for odd k; Bolt cluster {@code echo} is
     * {e1} for even k, {e1,e2} for odd; {@code echo-alt} (e2) exists and is the Bolt default for k % 4 == 1;
     * the catch-all route's timeout changes every time. Config 10: c = {b1:1, b2:3}, echo = {e1}.
     */
    private GatewayConfig variant(int k) {
        List<HostConfig> c = switch (k % 3) {
            case 0 -> List.of(h(b1, 1), h(b2, 1), h(b3, 1));
            case 1 -> List.of(h(b1, 1), h(b2, 3));
            default -> List.of(h(b1, 2), h(b3, 1));
        };
        List<ClusterConfig> clusters = new ArrayList<>();
        clusters.add(ClusterConfig.of("c", c));
        List<RouteConfig> routes = new ArrayList<>();
        if (k % 2 == 1) {
            clusters.add(ClusterConfig.of("api", List.of(h(b3, 1))));
            routes.add(new RouteConfig("api", RouteMatch.pathPrefix("/api/"), "api", null, null));
        }
        routes.add(new RouteConfig("all", null, "c", null, Duration.ofSeconds(10 + k)));
        clusters.add(bolt("echo", k % 2 == 0 ? List.of(h(e1)) : List.of(h(e1), h(e2))));
        boolean alt = k % 4 == 1;
        if (alt) {
            clusters.add(bolt("echo-alt", List.of(h(e2))));
        }
        ListenerConfig web = ListenerConfig.builder().name("web").routes(routes).build();
        ListenerConfig rpc = ListenerConfig.builder().name("rpc").protocol(Protocol.BOLT)
                .bolt(BoltOptions.builder().maxFrameLength(4 << 20).defaultCluster(alt ? "echo-alt" : "echo").build()).build();
        return GatewayConfig.builder().listeners(web, rpc).clusters(clusters).admin(new AdminConfig(true, "127.0.0.1", 0))
                .transport(TransportConfig.builder().workerThreads(2).backlog(128).build())
                .drainTimeout(Duration.ofSeconds(5)).build();
    }

    private static ClusterConfig bolt(String name, List<HostConfig> hosts) {
        return ClusterConfig.builder().name(name).protocol(Protocol.BOLT).lb(LbPolicy.ROUND_ROBIN).hosts(hosts)
                .connectTimeout(Duration.ofSeconds(2)).responseTimeout(Duration.ofSeconds(10)).build();
    }

    private URI admin(String path) {
        return URI.create("http://127.0.0.1:" + gw.adminAddress().getPort() + path);
    }

    private HttpResponse<String> postReload() throws Exception {
        return client.send(HttpRequest.newBuilder(admin("/reload")).POST(HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(URI uri) throws Exception {
        return client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void tenReloadsUnderHttpAndBoltLoadLoseNothing() throws Exception {
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicLong httpOk = new AtomicLong();
        AtomicLong boltOk = new AtomicLong();
        Queue failures = new Queue();
        Map<String, AtomicLong> byBody = new ConcurrentHashMap<>();
        List<Thread> threads = new ArrayList<>();
        int webPort = gw.port("web");
        for (int i = 0; i < 4; i++) {
            String path = i % 2 == 0 ? "/x" : "/api/y";
            threads.add(new Thread(() -> {
                HttpClient hc = HttpClient.newHttpClient();
                URI uri = URI.create("http://127.0.0.1:" + webPort + path);
                while (running.get()) {
                    try {
                        HttpResponse<String> r = hc.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                                HttpResponse.BodyHandlers.ofString());
                        if (r.statusCode() == 200) {
                            httpOk.incrementAndGet();
                            byBody.computeIfAbsent(r.body().trim(), x -> new AtomicLong()).incrementAndGet();
                        } else {
                            failures.add("http " + path + ": " + r.statusCode() + " " + r.body());
                        }
                    } catch (Exception e) {
                        failures.add("http " + path + ": " + e);
                    }
                }
            }, "http-load-" + i));
        }
        RpcClient rpc = new RpcClient();
        rpc.startup();
        String rpcAddr = "127.0.0.1:" + gw.port("rpc");
        for (int i = 0; i < 2; i++) {
            int id = i;
            threads.add(new Thread(() -> {
                long n = 0;
                while (running.get()) {
                    String msg = "m" + id + "-" + n++;
                    try {
                        Object r = rpc.invokeSync(rpcAddr, msg, 10_000);
                        if (msg.equals(r)) {
                            boltOk.incrementAndGet();
                        } else {
                            failures.add("bolt: answered " + r + " to " + msg);
                        }
                    } catch (Exception e) {
                        failures.add("bolt: " + e);
                    }
                }
            }, "bolt-load-" + i));
        }
        try {
            threads.forEach(Thread::start);
            Thread.sleep(300);
            for (int k = 1; k <= 10; k++) {
                Files.writeString(file, ConfigJson.render(variant(k)));
                HttpResponse<String> r = postReload();
                assertThat(r.statusCode()).as("reload %d: %s", k, r.body()).isEqualTo(200);
                assertThat(r.body()).startsWith("config version " + (k + 1) + ":");
                assertThat(gw.configVersion()).isEqualTo(k + 1);
                assertThat(gw.config()).isEqualTo(variant(k));
                Thread.sleep(250);
            }
            // config 10: c = {b1:1, b2:3}, no api cluster, echo = {e1}: b3 and e2 get nothing new
            Thread.sleep(200); // requests that picked b3/e2 before the last swap finish
            int b3Before = b3.requests();
            long e2Before = e2.handled();
            byBody.clear();
            long boltBefore = boltOk.get();
            // an observation window measured in requests, not wall time: enough of both kinds to
            // see that nothing reaches the removed hosts and that b2:b1 follows the weights
            await().atMost(Duration.ofSeconds(30)).until(() ->
                    count(byBody, b1) + count(byBody, b2) >= 400 && boltOk.get() - boltBefore >= 100);
            assertThat(b3.requests()).as("removed host b3").isEqualTo(b3Before);
            assertThat(e2.handled()).as("removed bolt host e2").isEqualTo(e2Before);
            long one = count(byBody, b1);
            long two = count(byBody, b2);
            assertThat(one).isPositive();
            assertThat((double) two / one).as("b2:b1 with weights 3:1 (%d:%d)", two, one).isBetween(2.0, 4.5);
        } finally {
            running.set(false);
            for (Thread t : threads) {
                t.join(15_000);
            }
            rpc.shutdown();
        }
        assertThat(failures.list()).as("failed requests").isEmpty();
        assertThat(httpOk.get()).isGreaterThan(100);
        assertThat(boltOk.get()).isGreaterThan(100);
        assertThat(gw.cluster("api")).isNull();
        assertThat(gw.cluster("echo-alt")).isNull();
        String metrics = get(admin("/metrics")).body();
        assertThat(metrics).contains("sluice_config_reloads_total{result=\"success\"} 10.0",
                "sluice_config_reloads_total{result=\"failure\"} 0.0", "sluice_config_version 11.0");
        assertThat(metrics).doesNotContain("cluster=\"api\"", "cluster=\"echo-alt\"");
    }

    private static long count(Map<String, AtomicLong> byBody, TestBackend b) {
        AtomicLong n = byBody.get("ok from " + b.port());
        return n == null ? 0 : n.get();
    }

    @Test
    void badReloadIsRejectedAndTheOldConfigKeepsServing() throws Exception {
        GatewayConfig before = gw.config();
        String broken = ConfigJson.render(variant(1)).replaceFirst("\"weight\" : 1", "\"weight\" : -1");
        Files.writeString(file, broken);
        HttpResponse<String> r = postReload();
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("$.clusters[0].hosts[0].weight", "-1");
        assertThat(gw.config()).isSameAs(before);
        assertThat(gw.configVersion()).isEqualTo(1);
        assertThat(get(URI.create("http://127.0.0.1:" + gw.port("web") + "/x")).statusCode()).isEqualTo(200);
        assertThat(get(admin("/metrics")).body()).contains("sluice_config_reloads_total{result=\"failure\"} 1.0",
                "sluice_config_reloads_total{result=\"success\"} 0.0", "sluice_config_version 1.0");

        // syntax errors, a listener moved to a port it cannot bind and a transport change are rejected the same way
        Files.writeString(file, "{\"listeners\": [");
        assertThat(postReload().statusCode()).isEqualTo(400);
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            GatewayConfig moved = variant(0).withListeners(List.of(
                    variant(0).listeners().get(0).withPort(taken.getLocalPort()), variant(0).listeners().get(1)));
            Files.writeString(file, ConfigJson.render(moved));
            HttpResponse<String> port = postReload();
            assertThat(port.statusCode()).isEqualTo(400);
            assertThat(port.body()).contains("$.listeners[0].port", String.valueOf(taken.getLocalPort()), "failed");
        }
        assertThatThrownBy(() -> gw.reload(variant(0).withTransport(new TransportConfig("nio", 1, 7))))
                .isInstanceOf(ConfigException.class).hasMessageContaining("$.transport");
        assertThat(get(admin("/metrics")).body()).contains("sluice_config_reloads_total{result=\"failure\"} 4.0");
        assertThat(gw.config()).isSameAs(before);
        assertThat(get(admin("/reload")).statusCode()).isEqualTo(405);

        // and a good file afterwards applies
        Files.writeString(file, ConfigJson.render(variant(1)));
        assertThat(postReload().statusCode()).isEqualTo(200);
        assertThat(gw.configVersion()).isEqualTo(2);
    }

    @Test
    void configAndHealthz() throws Exception {
        HttpResponse<String> config = get(admin("/config"));
        assertThat(config.statusCode()).isEqualTo(200);
        assertThat(config.headers().firstValue("content-type")).hasValue("application/json");
        assertThat(config.body()).contains("\"drain_timeout\" : \"5s\"", "\"timeout\" : \"10s\"");
        // the rendering is the native file format: it loads back into the running config
        assertThat(ConfigLoader.parse(config.body(), "GET /config").config()).isEqualTo(gw.config());

        HttpResponse<String> healthz = get(admin("/healthz"));
        assertThat(healthz.statusCode()).isEqualTo(200);
        assertThat(healthz.body()).isEqualTo("ok\n");
        assertThat(get(admin("/ready")).body()).isEqualTo("ready\n");
    }

    /** Failures seen by the load threads. */
    private static final class Queue {
        private final ConcurrentLinkedQueue<String> q = new ConcurrentLinkedQueue<>();

        void add(String s) {
            q.add(s);
        }

        List<String> list() {
            return List.copyOf(q);
        }
    }
}
