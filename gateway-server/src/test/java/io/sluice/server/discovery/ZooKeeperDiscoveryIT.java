package io.sluice.server.discovery;

import com.alipay.remoting.BizContext;
import com.alipay.remoting.rpc.RpcClient;
import com.alipay.remoting.rpc.RpcServer;
import com.alipay.remoting.rpc.protocol.SyncUserProcessor;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * ZooKeeper discovery end to end, every peer real: an in-process ZooKeeper server (curator-test
 * {@code TestingServer}, tickTime 500 ms so sessions may be as short as 1 s) on a free loopback port,
 * provider nodes written in SOFARPC's exact layout by {@link SofaRegistrar} (one ZooKeeper session per
 * provider), real bolt {@code RpcServer}s as the providers, and the real bolt {@code RpcClient}
 * calling through the gateway. Each test uses its own service interface.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class ZooKeeperDiscoveryIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private TestingServer zk;
    private RpcClient client;
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<AutoCloseable> closeAfter = new ArrayList<>();

    /** A bolt provider answering its own port; counts the requests it handled. */
    static final class Provider implements AutoCloseable {
        final RpcServer server;
        final AtomicInteger handled = new AtomicInteger();

        Provider() {
            server = new RpcServer("127.0.0.1", 0, true);
            server.registerUserProcessor(new SyncUserProcessor<String>() {
                @Override
                public Object handleRequest(BizContext ctx, String req) {
                    handled.incrementAndGet();
                    return "from:" + server.port();
                }

                @Override
                public String interest() {
                    return String.class.getName();
                }
            });
            server.startup();
        }

        int port() {
            return server.port();
        }

        @Override
        public void close() {
            server.shutdown();
        }
    }

    @BeforeAll
    void start() throws Exception {
        InstanceSpec spec = new InstanceSpec(Files.createTempDirectory("zk").toFile(), InstanceSpec.getRandomPort(), -1, -1,
                true, -1, 500, -1);
        zk = new TestingServer(spec, true);
        client = new RpcClient();
        client.startup();
    }

    @AfterEach
    void closeTestPeers() {
        for (int i = closeAfter.size() - 1; i >= 0; i--) {
            try {
                closeAfter.get(i).close();
            } catch (Exception e) {
                // best effort
            }
        }
        closeAfter.clear();
    }

    @AfterAll
    void stop() throws Exception {
        client.shutdown();
        zk.close();
    }

    private <T extends AutoCloseable> T closing(T c) {
        closeAfter.add(c);
        return c;
    }

    private Gateway gateway(String service, SlowStartConfig slowStart, Duration session) {
        DiscoveryConfig d = DiscoveryConfig.zookeeper(zk.getConnectString(), service).withSessionTimeout(session);
        ClusterConfig c = ClusterConfig.builder().name("echo").protocol(Protocol.BOLT).discovery(d).slowStart(slowStart)
                .connectTimeout(Duration.ofSeconds(1)).build();
        ListenerConfig l = ListenerConfig.builder().name("bolt").protocol(Protocol.BOLT)
                .bolt(BoltOptions.builder().defaultCluster("echo").build()).build();
        return closing(GatewayFixture.start(GatewayConfig.builder().listeners(l).clusters(c)
                .admin(new AdminConfig(true, "127.0.0.1", 0, true))
                .transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                .drainTimeout(Duration.ofSeconds(2)).build()));
    }

    private String call(Gateway gw) throws Exception {
        return (String) client.invokeSync("127.0.0.1:" + gw.port("bolt"), "hi", 3000);
    }

    /** Sends {@code n} requests; returns the count per answering port. */
    private Map<String, Integer> spread(Gateway gw, int n) throws Exception {
        Map<String, Integer> m = new HashMap<>();
        for (int i = 0; i < n; i++) {
            m.merge(call(gw), 1, Integer::sum);
        }
        return m;
    }

    private JsonNode cluster(Gateway gw) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + gw.adminAddress().getPort() + "/clusters"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(r.body()).get("clusters").get(0);
    }

    private String metrics(Gateway gw) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gw.adminAddress().getPort() + "/metrics"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    private static JsonNode host(JsonNode cluster, int port) {
        for (JsonNode h : cluster.get("hosts")) {
            if (h.get("address").asText().endsWith(":" + port)) {
                return h;
            }
        }
        return null;
    }

    @Test
    void providersComeAndGoWithTheirWeightsAndStartTimes() throws Exception {
        String iface = "com.example.WeightService";
        Provider a = closing(new Provider());
        Provider b = closing(new Provider());
        Provider other = closing(new Provider());
        SofaRegistrar reg = closing(new SofaRegistrar(zk.getConnectString(), 10_000));
        long now = System.currentTimeMillis();
        Gateway gw = gateway(iface + ":1.0", new SlowStartConfig(Duration.ofSeconds(60), 1.0, 0.10), Duration.ofSeconds(10));

        // no provider yet: the request fails at once (this also opens the client's connection to the gateway)
        await().atMost(Duration.ofSeconds(5)).until(() -> cluster(gw).get("discovery").get("connected").asBoolean());
        assertThat(catchThrowable(() -> call(gw))).isNotNull();

        // register -> traffic within 1 s
        String aPath = reg.register(iface, SofaRegistrar.url(iface, a.port(), 100, now - 3_600_000, "", null, null));
        long created = System.nanoTime();
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(10)).ignoreExceptions()
                .until(() -> call(gw).equals("from:" + a.port()));
        long firstMs = (System.nanoTime() - created) / 1_000_000;
        assertThat(firstMs).isLessThan(1000);

        // nodes a default (uniqueId "") consumer must not use: another uniqueId, another protocol, no uniqueId, garbage
        reg.register(iface, SofaRegistrar.url(iface, other.port(), 100, now, "u1", null, null));
        reg.register(iface, SofaRegistrar.url(iface, other.port() , 100, now, "", null, null)
                .replace("bolt://", "rest://").replace("protocol=bolt", "protocol=rest"));
        reg.register(iface, SofaRegistrar.url(iface, other.port(), 100, now, "", null, null).replace("&uniqueId=", "&x="));
        reg.client.create().forPath("/sofa-rpc/" + iface + "/providers/bolt%3A%2F%2Fnoport%3Fweight", new byte[] {1});

        // B weight 200, started 15 s ago by its own clock: warming at 15/60 of 200 on the gateway's slow start
        String bUrl = SofaRegistrar.url(iface, b.port(), 200, now - 15_000, "", 60_000L, 10);
        String bPath = reg.register(iface, bUrl);
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20))
                .until(() -> host(cluster(gw), b.port()) != null);
        JsonNode c = cluster(gw);
        assertThat(c.get("hosts")).hasSize(2);
        JsonNode hb = host(c, b.port());
        assertThat(hb.get("source").asText()).isEqualTo("zookeeper");
        assertThat(hb.get("weight").asInt()).isEqualTo(200);
        assertThat(hb.get("start_time_ms").asLong()).isEqualTo(now - 15_000);
        double elapsed = (c.get("discovery").get("wall_now_ms").asLong() - (now - 15_000)) / 60_000.0;
        assertThat(hb.get("warm_up_factor").asDouble()).isBetween(elapsed - 0.02, elapsed + 0.02);
        assertThat(host(c, a.port()).get("warm_up_factor").asDouble()).isEqualTo(1.0);
        assertThat(c.get("discovery").get("connected").asBoolean()).isTrue();
        assertThat(metrics(gw)).contains("sluice_discovery_parse_failures_total{cluster=\"echo\"} 1.0")
                .contains("sluice_discovery_hosts{cluster=\"echo\"} 2.0").contains("sluice_discovery_hosts_digest{");
        assertThat(other.handled.get()).isZero();

        // weight change in the registry (new child, same startTime, old one deleted): the ratio follows
        String bWarm = SofaRegistrar.url(iface, b.port(), 300, now - 3_600_000, "", null, null);
        reg.register(iface, bWarm);
        reg.unregister(bPath);
        bPath = SofaRegistrar.path(iface, bWarm);
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20))
                .until(() -> host(cluster(gw), b.port()).get("weight").asInt() == 300);
        Map<String, Integer> s = spread(gw, 400);
        assertThat(s.get("from:" + a.port())).isBetween(95, 105);
        assertThat(s.get("from:" + b.port())).isBetween(295, 305);

        // weight 0 (re-registered): no traffic
        String bOff = SofaRegistrar.url(iface, b.port(), 0, now - 3_600_000, "", null, null);
        reg.register(iface, bOff);
        reg.unregister(bPath);
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20))
                .until(() -> host(cluster(gw), b.port()) == null);
        int before = b.handled.get();
        assertThat(spread(gw, 50)).containsOnlyKeys("from:" + a.port());
        assertThat(b.handled.get()).isEqualTo(before);

        // a deleted node: gone within 1 s; the last node deleted: the last set is kept (allow_empty false)
        reg.unregister(SofaRegistrar.path(iface, bOff));
        reg.register(iface, bWarm);
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20))
                .until(() -> host(cluster(gw), b.port()) != null);
        reg.unregister(aPath);
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20))
                .until(() -> host(cluster(gw), a.port()) == null);
        int aBefore = a.handled.get();
        assertThat(spread(gw, 20)).containsOnlyKeys("from:" + b.port());
        assertThat(a.handled.get()).isEqualTo(aBefore);
        reg.unregister(SofaRegistrar.path(iface, bWarm));
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20))
                .until(() -> cluster(gw).get("discovery").get("empty_protected").asBoolean());
        assertThat(spread(gw, 5)).containsOnlyKeys("from:" + b.port());
    }

    @Test
    void aCrashedProviderLeavesWhenItsSessionExpiresAndARestartedOneNeverDisappears() throws Exception {
        String iface = "com.example.CrashService";
        Provider a = closing(new Provider());
        Provider b = closing(new Provider());
        Provider c = closing(new Provider());
        SofaRegistrar.Crashable regA = new SofaRegistrar.Crashable(zk.getConnectString(), 2_000);
        SofaRegistrar.Crashable regB = new SofaRegistrar.Crashable(zk.getConnectString(), 2_000);
        SofaRegistrar regC = closing(new SofaRegistrar(zk.getConnectString(), 10_000));
        SofaRegistrar regB2 = closing(new SofaRegistrar(zk.getConnectString(), 10_000)); // B's next process
        long old = System.currentTimeMillis() - 3_600_000;
        String aPath = regA.register(iface, SofaRegistrar.url(iface, a.port(), 100, old, "", null, null));
        String bPath = regB.register(iface, SofaRegistrar.url(iface, b.port(), 100, old, "", null, null));
        regC.register(iface, SofaRegistrar.url(iface, c.port(), 100, old, "", null, null));
        Gateway gw = gateway(iface + ":1.0", null, Duration.ofSeconds(10));
        await().atMost(Duration.ofSeconds(2)).until(() -> cluster(gw).get("hosts").size() == 3);

        // kill -9 of A and of B: their nodes stay until the server expires their 2 s sessions; B restarts at
        // once on the same port (new pid, new startTime): two children for B until the old one expires
        regA.crash();
        regB.crash();
        long crashed = System.nanoTime();
        long restart = System.currentTimeMillis();
        regB2.register(iface, SofaRegistrar.url(iface, b.port(), 150, restart, "", null, null).replace("pid=4242", "pid=4343"));
        // while both children exist, the newest (latest startTime) is the one that counts
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20))
                .until(() -> host(cluster(gw), b.port()).get("start_time_ms").asLong() == restart);
        assertThat(regC.client.checkExists().forPath(bPath)).as("the crashed B's node is still there").isNotNull();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
            assertThat(host(cluster(gw), b.port())).as("a restarted provider never disappears").isNotNull();
            return regC.client.checkExists().forPath(aPath) == null && regC.client.checkExists().forPath(bPath) == null;
        });
        long goneMs = (System.nanoTime() - crashed) / 1_000_000;
        assertThat(goneMs).as("the nodes outlive the crash until the session times out").isGreaterThan(1_000);
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20))
                .until(() -> host(cluster(gw), a.port()) == null);
        JsonNode hb = host(cluster(gw), b.port());
        assertThat(hb.get("start_time_ms").asLong()).isEqualTo(restart);
        assertThat(hb.get("weight").asInt()).isEqualTo(150);
        int aBefore = a.handled.get();
        assertThat(spread(gw, 20)).containsOnlyKeys("from:" + b.port(), "from:" + c.port());
        assertThat(a.handled.get()).isEqualTo(aBefore);
    }

    @Test
    void aZooKeeperOutageKeepsTheLastProvidersAndChangesResumeAfterIt() throws Exception {
        String iface = "com.example.OutageService";
        Provider a = closing(new Provider());
        Provider b = closing(new Provider());
        SofaRegistrar reg = closing(new SofaRegistrar(zk.getConnectString(), 30_000));
        long old = System.currentTimeMillis() - 3_600_000;
        reg.register(iface, SofaRegistrar.url(iface, a.port(), 100, old, "", null, null));
        Gateway gw = gateway(iface + ":1.0", null, Duration.ofSeconds(2));
        await().atMost(Duration.ofSeconds(2)).ignoreExceptions().until(() -> call(gw).equals("from:" + a.port()));

        zk.stop();
        try {
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                    .until(() -> cluster(gw).get("discovery").get("state").asText().startsWith("lost"));
            JsonNode c = cluster(gw);
            assertThat(c.get("discovery").get("stale").asBoolean()).isTrue();
            assertThat(c.get("hosts")).hasSize(1);
            assertThat(spread(gw, 20)).containsOnlyKeys("from:" + a.port());
            assertThat(metrics(gw)).contains("sluice_discovery_connected{cluster=\"echo\"} 0.0")
                    .contains("sluice_discovery_state_changes_total{cluster=\"echo\",state=\"lost\"} 1.0");
        } finally {
            zk.restart();
        }
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                .until(() -> cluster(gw).get("discovery").get("connected").asBoolean());
        assertThat(reg.client.blockUntilConnected(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        reg.register(iface, SofaRegistrar.url(iface, b.port(), 100, old, "", null, null));
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20))
                .until(() -> host(cluster(gw), b.port()) != null);
        assertThat(spread(gw, 20)).containsOnlyKeys("from:" + a.port(), "from:" + b.port());
    }

    @Test
    void twoGatewaysAgreeOnHostsDigestsAndWarmUpWeights() throws Exception {
        String iface = "com.example.FleetService";
        Provider a = closing(new Provider());
        Provider b = closing(new Provider());
        SofaRegistrar reg = closing(new SofaRegistrar(zk.getConnectString(), 10_000));
        SlowStartConfig ss = new SlowStartConfig(Duration.ofSeconds(60), 1.0, 0.10);
        Gateway gw1 = gateway(iface + ":1.0", ss, Duration.ofSeconds(10));
        Gateway gw2 = gateway(iface + ":1.0", ss, Duration.ofSeconds(10));
        long now = System.currentTimeMillis();
        reg.register(iface, SofaRegistrar.url(iface, a.port(), 100, now - 120_000, "", null, null));
        reg.register(iface, SofaRegistrar.url(iface, b.port(), 200, now - 15_000, "", 60_000L, 10));
        long created = System.nanoTime();
        for (Gateway gw : List.of(gw1, gw2)) {
            await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(10))
                    .until(() -> cluster(gw).get("hosts").size() == 2);
        }
        assertThat((System.nanoTime() - created) / 1_000_000).as("both see both providers within 1 s").isLessThan(1000);
        JsonNode c1 = cluster(gw1);
        JsonNode c2 = cluster(gw2);
        assertThat(c1.get("discovery").get("hosts_digest").asText()).isEqualTo(c2.get("discovery").get("hosts_digest").asText());
        // B warms from its own startTime on both gateways: 200 x elapsed / 60 s, whenever each gateway first saw it
        for (JsonNode c : List.of(c1, c2)) {
            double expected = 200.0 * (c.get("discovery").get("wall_now_ms").asLong() - (now - 15_000)) / 60_000.0;
            assertThat(host(c, b.port()).get("effective_weight").asDouble()).isBetween(expected * 0.99 - 0.5, expected * 1.01 + 0.5);
            assertThat(host(c, a.port()).get("effective_weight").asDouble()).isEqualTo(100.0);
        }
        String d1 = metrics(gw1).lines().filter(l -> l.startsWith("sluice_discovery_hosts_digest")).findFirst().orElseThrow();
        String d2 = metrics(gw2).lines().filter(l -> l.startsWith("sluice_discovery_hosts_digest")).findFirst().orElseThrow();
        assertThat(d1).isEqualTo(d2);
    }

    @Test
    void aProvidersWarmupTimeAndWarmupWeightFromItsNodeDriveItsRampWithoutClusterSlowStart() throws Exception {
        String iface = "com.example.WarmService";
        Provider c = closing(new Provider());
        Provider d = closing(new Provider());
        Provider e = closing(new Provider());
        SofaRegistrar reg = closing(new SofaRegistrar(zk.getConnectString(), 10_000));
        Gateway gw = gateway(iface + ":1.0", null, Duration.ofSeconds(10)); // no slow_start on the cluster
        long now = System.currentTimeMillis();
        // C: weight 100, warmupTime 120 s, warmupWeight 40, started 30 s ago -> max(40/100, 30/120) = 0.40 -> 40
        reg.register(iface, SofaRegistrar.url(iface, c.port(), 100, now - 30_000, "", 120_000L, 40));
        // D: weight 200, warmupTime 600 s, no warmupWeight, started 300 s ago -> max(0.10, 0.5) = 0.5 -> 100
        reg.register(iface, SofaRegistrar.url(iface, d.port(), 200, now - 300_000, "", 600_000L, null));
        // E: weight 100, no warm-up keys, started 1 s ago -> no warm-up at all (the cluster has none)
        reg.register(iface, SofaRegistrar.url(iface, e.port(), 100, now - 1_000, "", null, null));
        await().atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(20))
                .until(() -> cluster(gw).get("hosts").size() == 3);
        JsonNode cl = cluster(gw);
        long wallNow = cl.get("discovery").get("wall_now_ms").asLong();
        JsonNode hc = host(cl, c.port());
        assertThat(hc.get("warm_up_window_ms").asLong()).isEqualTo(120_000);
        assertThat(hc.get("warm_up_weight").asInt()).isEqualTo(40);
        assertThat(hc.get("warm_up_factor").asDouble()).isEqualTo(0.4); // the floor: 30 s of 120 s is only 0.25
        assertThat(hc.get("effective_weight").asDouble()).isEqualTo(40.0);
        JsonNode hd = host(cl, d.port());
        assertThat(hd.get("warm_up_window_ms").asLong()).isEqualTo(600_000);
        assertThat(hd.get("warm_up_weight").asInt()).isEqualTo(-1);
        double fd = (wallNow - (now - 300_000)) / 600_000.0;
        assertThat(hd.get("warm_up_factor").asDouble()).isBetween(fd - 0.002, fd + 0.002);
        assertThat(hd.get("effective_weight").asDouble()).isBetween(200 * fd - 0.5, 200 * fd + 0.5);
        JsonNode he = host(cl, e.port());
        assertThat(he.has("warm_up_window_ms")).isFalse();
        assertThat(he.get("effective_weight").asDouble()).isEqualTo(100.0);
        // the per-host gauges say the same
        String m = metrics(gw);
        assertThat(m).contains("sluice_upstream_host_effective_weight{cluster=\"echo\",host=\"127.0.0.1:" + c.port() + "\"} 40.0")
                .contains("sluice_upstream_host_warmup_factor{cluster=\"echo\",host=\"127.0.0.1:" + c.port() + "\"} 0.4")
                .contains("sluice_upstream_host_effective_weight{cluster=\"echo\",host=\"127.0.0.1:" + e.port() + "\"} 100.0");
        // traffic follows 40 : ~100 : 100
        Map<String, Integer> s = spread(gw, 480);
        double total = 40 + 200 * fd + 100;
        assertThat(s.get("from:" + c.port())).isBetween((int) (480 * 40 / total) - 3, (int) (480 * 40 / total) + 3);
        assertThat(s.get("from:" + e.port())).isBetween((int) (480 * 100 / total) - 3, (int) (480 * 100 / total) + 3);
    }

    @Test
    void routeByRegistryClustersAreListedByTheAdminApiWithTheirSource() throws Exception {
        String iface = "com.example.RoutedService";
        Provider p = closing(new Provider());
        SofaRegistrar reg = closing(new SofaRegistrar(zk.getConnectString(), 10_000));
        reg.register(iface, SofaRegistrar.url(iface, p.port(), 100, System.currentTimeMillis() - 600_000, "", null, null));
        ClusterConfig template = ClusterConfig.builder().name("registry").protocol(Protocol.BOLT)
                .discovery(DiscoveryConfig.zookeeper(zk.getConnectString(), "*").withSessionTimeout(Duration.ofSeconds(10)))
                .connectTimeout(Duration.ofSeconds(1)).build();
        ListenerConfig l = ListenerConfig.builder().name("bolt").protocol(Protocol.BOLT)
                .bolt(BoltOptions.builder().defaultCluster("registry").build()).build();
        Gateway gw = closing(GatewayFixture.start(GatewayConfig.builder().listeners(l).clusters(template)
                .admin(new AdminConfig(true, "127.0.0.1", 0, true))
                .transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                .drainTimeout(Duration.ofSeconds(2)).build()));
        // the first request for the service starts its discovery (as a Bolt request with that service header does)
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
                .until(() -> gw.cluster("registry").child(iface + ":1.0") != null);
        await().atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(20))
                .until(() -> gw.cluster("registry").child(iface + ":1.0").hosts().size() == 1);
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + gw.adminAddress().getPort() + "/clusters"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        JsonNode clusters = JSON.readTree(r.body()).get("clusters");
        assertThat(clusters).hasSize(2);
        JsonNode t = clusters.get(0);
        assertThat(t.get("name").asText()).isEqualTo("registry");
        assertThat(t.get("discovery").get("service").asText()).isEqualTo("*");
        assertThat(t.get("discovery").get("routed_clusters").get(0).asText()).isEqualTo("registry/" + iface);
        JsonNode child = clusters.get(1);
        assertThat(child.get("name").asText()).isEqualTo("registry/" + iface);
        assertThat(child.get("discovery").get("type").asText()).isEqualTo("zookeeper");
        assertThat(child.get("discovery").get("source").asText()).contains("/sofa-rpc/" + iface + "/providers");
        assertThat(child.get("discovery").get("connected").asBoolean()).isTrue();
        JsonNode h = child.get("hosts").get(0);
        assertThat(h.get("address").asText()).isEqualTo("127.0.0.1:" + p.port());
        assertThat(h.get("source").asText()).isEqualTo("zookeeper");
        assertThat(metrics(gw)).contains("sluice_discovery_hosts{cluster=\"registry/" + iface + "\"} 1.0");
    }

    @Test
    void sourcesOnOneRegistryShareOneSessionAndOneThread() throws Exception {
        SofaRegistrar reg = closing(new SofaRegistrar(zk.getConnectString(), 10_000));
        long now = System.currentTimeMillis();
        reg.register("com.example.T1", SofaRegistrar.url("com.example.T1", 20001, 100, now, "", null, null));
        reg.register("com.example.T2", SofaRegistrar.url("com.example.T2", 20002, 100, now, "", null, null));
        ZooKeeperClients clients = new ZooKeeperClients();
        Map<String, Thread> publishedOn = new java.util.concurrent.ConcurrentHashMap<>();
        List<ZooKeeperSofaSource> sources = new ArrayList<>();
        for (String iface : List.of("com.example.T1", "com.example.T2")) {
            ZooKeeperSofaSource src = new ZooKeeperSofaSource(DiscoveryConfig.zookeeper(zk.getConnectString(), iface + ":1.0"),
                    () -> { }, clients);
            sources.add(src);
            src.start(new io.sluice.core.discovery.HostSource.Sink() {
                @Override
                public void hosts(List<io.sluice.core.discovery.DiscoveredHost> hosts) {
                    if (!hosts.isEmpty()) {
                        publishedOn.put(iface, Thread.currentThread());
                    }
                }

                @Override
                public void state(String state, boolean connected) {
                }
            });
        }
        try {
            await().atMost(Duration.ofSeconds(5)).until(() -> publishedOn.size() == 2);
            assertThat(clients.open()).isEqualTo(1);
            assertThat(publishedOn.get("com.example.T1")).isSameAs(publishedOn.get("com.example.T2"));
        } finally {
            sources.forEach(ZooKeeperSofaSource::close);
        }
        assertThat(clients.open()).isZero();
        await().atMost(Duration.ofSeconds(5)).until(() -> !publishedOn.get("com.example.T1").isAlive());
    }
}
