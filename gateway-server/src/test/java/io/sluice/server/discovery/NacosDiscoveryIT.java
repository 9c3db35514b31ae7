package io.sluice.server.discovery;

import com.alipay.remoting.rpc.RpcClient;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.NacosOptions;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.TransportConfig;
import io.sluice.core.discovery.DiscoveredHost;
import io.sluice.core.discovery.HostSource;
import io.sluice.core.time.ManualScheduler;
import io.sluice.server.Gateway;
import io.sluice.server.discovery.ZooKeeperDiscoveryIT.Provider;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.NacosServer;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Nacos discovery end to end, every peer real: a real Nacos server in its own JVM ({@link NacosServer},
 * standalone, started once for the class), instances registered through Nacos's HTTP open API with the
 * metadata SOFARPC's Nacos registry writes ({@code weight}, {@code startTime}, {@code warmupTime},
 * {@code warmupWeight}, {@code protocol}, {@code uniqueId}) under SOFARPC's service name
 * ({@code interface:DEFAULT}) in SOFARPC's namespace ({@code sofa-rpc}) and cluster ({@code default-cluster}),
 * real bolt {@code RpcServer}s as the providers and the real bolt {@code RpcClient} calling through the gateway.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(300) // the first run on a fresh machine downloads Nacos's classpath (~80 jars); later runs take seconds
class NacosDiscoveryIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CLUSTER = NacosOptions.DEFAULT_CLUSTER;
    private NacosServer nacos;
    private RpcClient client;
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<AutoCloseable> closeAfter = new ArrayList<>();

    @BeforeAll
    void start() throws Exception {
        nacos = NacosServer.start();
        client = new RpcClient();
        client.startup();
    }

    @AfterEach
    void closeTestPeers() throws Exception {
        for (int i = closeAfter.size() - 1; i >= 0; i--) {
            try {
                closeAfter.get(i).close();
            } catch (Exception e) {
                // best effort
            }
        }
        closeAfter.clear();
        nacos.startProcess(); // a test that stopped it and failed
    }

    @AfterAll
    void stop() throws Exception {
        client.shutdown();
        nacos.close();
    }

    private <T extends AutoCloseable> T closing(T c) {
        closeAfter.add(c);
        return c;
    }

    private static Map<String, String> sofaMeta(int weight, long startTime, Long warmupTime, Integer warmupWeight) {
        Map<String, String> m = new HashMap<>();
        m.put("protocol", "bolt");
        m.put("uniqueId", "");
        m.put("weight", String.valueOf(weight));
        m.put("startTime", String.valueOf(startTime));
        m.put("serialization", "hessian2");
        if (warmupTime != null) {
            m.put("warmupTime", String.valueOf(warmupTime));
        }
        if (warmupWeight != null) {
            m.put("warmupWeight", String.valueOf(warmupWeight));
        }
        return m;
    }

    private DiscoveryConfig discovery(String service, Duration poll) {
        return DiscoveryConfig.nacos(nacos.address(), service, NacosOptions.defaults().withPollInterval(poll))
                .withConnectionTimeout(Duration.ofMillis(500));
    }

    private Gateway gateway(String service, Duration poll) {
        ClusterConfig c = ClusterConfig.builder().name("echo").protocol(Protocol.BOLT).discovery(discovery(service, poll))
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
    void instancesComeAndGoWithTheirWeightsAndWarmUp() throws Exception {
        String iface = "com.example.NacosWeights";
        String name = iface + ":DEFAULT"; // SOFARPC's Nacos service name for a bolt service without uniqueId
        Provider a = closing(new Provider());
        Provider b = closing(new Provider());
        Provider c = closing(new Provider());
        long now = System.currentTimeMillis();
        Gateway gw = gateway(iface + ":1.0", Duration.ofMillis(200));

        await().atMost(Duration.ofSeconds(5)).until(() -> cluster(gw).get("discovery").get("connected").asBoolean());
        assertThat(catchThrowable(() -> call(gw))).as("no instance yet").isNotNull();

        // register -> traffic within 1 s (poll interval 200 ms)
        nacos.register(name, CLUSTER, "127.0.0.1", a.port(), 1.0, true, sofaMeta(100, now - 3_600_000, null, null));
        long registered = System.nanoTime();
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(10)).ignoreExceptions()
                .until(() -> call(gw).equals("from:" + a.port()));
        assertThat((System.nanoTime() - registered) / 1_000_000).isLessThan(1000);

        // B: SOFARPC warm-up metadata (weight 200, warmupTime 60 s, warmupWeight 10), started 30 s ago by its clock:
        // factor = max(10/200, 30/60) = 0.5 -> effective 100
        long bStart = now - 30_000;
        nacos.register(name, CLUSTER, "127.0.0.1", b.port(), 1.0, true, sofaMeta(200, bStart, 60_000L, 10));
        // C: a plain Nacos instance (no SOFARPC metadata), Nacos weight 0.5 -> 100 x 0.5 = 50
        nacos.register(name, CLUSTER, "127.0.0.1", c.port(), 0.5, true, Map.of());
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20))
                .until(() -> cluster(gw).get("hosts").size() == 3);
        JsonNode cl = cluster(gw);
        JsonNode hb = host(cl, b.port());
        assertThat(hb.get("source").asText()).isEqualTo("nacos");
        assertThat(hb.get("weight").asInt()).isEqualTo(200);
        assertThat(hb.get("start_time_ms").asLong()).isEqualTo(bStart);
        assertThat(hb.get("warm_up_window_ms").asLong()).isEqualTo(60_000);
        assertThat(hb.get("warm_up_weight").asInt()).isEqualTo(10);
        double expected = (cl.get("discovery").get("wall_now_ms").asLong() - bStart) / 60_000.0;
        assertThat(hb.get("warm_up_factor").asDouble()).isBetween(expected - 0.02, expected + 0.02);
        assertThat(host(cl, c.port()).get("weight").asInt()).isEqualTo(50);
        assertThat(host(cl, a.port()).get("warm_up_factor").asDouble()).isEqualTo(1.0);
        assertThat(cl.get("discovery").get("type").asText()).isEqualTo("nacos");
        assertThat(cl.get("discovery").get("source").asText()).contains("sofa-rpc/DEFAULT_GROUP/" + name);
        assertThat(metrics(gw)).contains("sluice_discovery_hosts{cluster=\"echo\"} 3.0")
                .contains("sluice_discovery_connected{cluster=\"echo\"} 1.0");

        // weight change (re-registered, same startTime, warm-up over): the ratio follows 100 : 300 : 50
        nacos.register(name, CLUSTER, "127.0.0.1", b.port(), 1.0, true, sofaMeta(300, now - 3_600_000, null, null));
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20))
                .until(() -> host(cluster(gw), b.port()).get("weight").asInt() == 300);
        Map<String, Integer> s = spread(gw, 450);
        assertThat(s.get("from:" + a.port())).isBetween(95, 105);
        assertThat(s.get("from:" + b.port())).isBetween(295, 305);
        assertThat(s.get("from:" + c.port())).isBetween(45, 55);

        // deregistered -> no new requests within 1 s
        nacos.deregister(name, CLUSTER, "127.0.0.1", b.port());
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20))
                .until(() -> host(cluster(gw), b.port()) == null);
        int bBefore = b.handled.get();
        assertThat(spread(gw, 30)).containsOnlyKeys("from:" + a.port(), "from:" + c.port());
        assertThat(b.handled.get()).isEqualTo(bBefore);

        // metadata weight 0 (SOFARPC: no traffic) and the last instance gone: the last set is kept (allow_empty false)
        nacos.register(name, CLUSTER, "127.0.0.1", c.port(), 1.0, true, sofaMeta(0, now, null, null));
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20))
                .until(() -> host(cluster(gw), c.port()) == null);
        nacos.deregister(name, CLUSTER, "127.0.0.1", c.port());
        nacos.deregister(name, CLUSTER, "127.0.0.1", a.port());
        await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20))
                .until(() -> cluster(gw).get("discovery").get("empty_protected").asBoolean());
        assertThat(spread(gw, 5)).containsOnlyKeys("from:" + a.port());
    }

    @Test
    void aNacosOutageKeepsTheLastHostsAndChangesResumeAfterIt() throws Exception {
        String iface = "com.example.NacosOutage";
        String name = iface + ":DEFAULT";
        Provider a = closing(new Provider());
        Provider b = closing(new Provider());
        long old = System.currentTimeMillis() - 3_600_000;
        nacos.register(name, CLUSTER, "127.0.0.1", a.port(), 1.0, true, sofaMeta(100, old, null, null));
        Gateway gw = gateway(iface + ":1.0", Duration.ofMillis(200));
        await().atMost(Duration.ofSeconds(2)).ignoreExceptions().until(() -> call(gw).equals("from:" + a.port()));

        nacos.stopProcess();
        await().atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(50))
                .until(() -> cluster(gw).get("discovery").get("state").asText().startsWith("unreachable"));
        JsonNode c = cluster(gw);
        assertThat(c.get("discovery").get("stale").asBoolean()).isTrue();
        assertThat(c.get("hosts")).hasSize(1);
        Thread.sleep(600); // several failed polls: still one state change, hosts kept
        assertThat(spread(gw, 20)).containsOnlyKeys("from:" + a.port());
        assertThat(metrics(gw)).contains("sluice_discovery_connected{cluster=\"echo\"} 0.0")
                .contains("sluice_discovery_state_changes_total{cluster=\"echo\",state=\"unreachable\"} 1.0");

        nacos.startProcess(); // same port, same data directory
        nacos.register(name, CLUSTER, "127.0.0.1", a.port(), 1.0, true, sofaMeta(100, old, null, null));
        nacos.register(name, CLUSTER, "127.0.0.1", b.port(), 1.0, true, sofaMeta(100, old, null, null));
        long registered = System.nanoTime();
        await().atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(20))
                .until(() -> cluster(gw).get("hosts").size() == 2);
        assertThat((System.nanoTime() - registered) / 1_000_000).isLessThan(1000);
        JsonNode d = cluster(gw).get("discovery");
        assertThat(d.get("connected").asBoolean()).isTrue();
        assertThat(d.get("state").asText()).startsWith("reconnected");
        assertThat(spread(gw, 40)).containsOnlyKeys("from:" + a.port(), "from:" + b.port());
        assertThat(metrics(gw)).contains("sluice_discovery_state_changes_total{cluster=\"echo\",state=\"reconnected\"} 1.0");
    }

    @Test
    void pollsFollowTheIntervalOnTheInjectedClockAndUnchangedListsAreNotRepublished() throws Exception {
        String name = "com.example.NacosClock:DEFAULT";
        nacos.register(name, CLUSTER, "127.0.0.1", 20_001, 1.0, true, sofaMeta(100, 1_000, null, null));
        ManualScheduler clock = new ManualScheduler();
        List<List<DiscoveredHost>> published = new CopyOnWriteArrayList<>();
        List<String> states = new CopyOnWriteArrayList<>();
        NacosHostSource src = new NacosHostSource(discovery("com.example.NacosClock:1.0", Duration.ofSeconds(3)),
                () -> { }, clock);
        closing(src);
        src.start(new HostSource.Sink() {
            @Override
            public void hosts(List<DiscoveredHost> hosts) {
                published.add(hosts);
            }

            @Override
            public void state(String state, boolean connected) {
                states.add(state);
            }
        });
        clock.runDue(); // the first poll runs at once (here: on this thread, blocking on a real HTTP request)
        assertThat(src.polls()).isEqualTo(1);
        assertThat(published).hasSize(1);
        assertThat(published.get(0)).containsExactly(new DiscoveredHost("127.0.0.1", 20_001, 100, 1_000, "nacos", 0, -1));
        assertThat(states).hasSize(1);
        assertThat(states.get(0)).startsWith("connected");

        clock.advance(Duration.ofSeconds(3).minusNanos(1));
        assertThat(src.polls()).as("not before the interval").isEqualTo(1);
        clock.advanceNanos(1);
        assertThat(src.polls()).isEqualTo(2);
        assertThat(published).as("an unchanged list is not published again").hasSize(1);

        nacos.register(name, CLUSTER, "127.0.0.1", 20_002, 1.0, true, sofaMeta(100, 2_000, null, null));
        clock.advance(Duration.ofSeconds(3));
        assertThat(src.polls()).isEqualTo(3);
        assertThat(published).hasSize(2);
        assertThat(published.get(1)).extracting(DiscoveredHost::port).containsExactly(20_001, 20_002);
        assertThat(states).hasSize(1);
    }

    @Test
    void aServerThatDoesNotAnswerIsLeftForTheNextAddressAtTheNextPoll() throws Exception {
        String name = "com.example.NacosFailover:DEFAULT";
        nacos.register(name, CLUSTER, "127.0.0.1", 20_003, 1.0, true, sofaMeta(100, 1_000, null, null));
        int dead = io.sluice.server.testing.Ports.freeExcept(nacos.port());
        ManualScheduler clock = new ManualScheduler();
        List<List<DiscoveredHost>> published = new CopyOnWriteArrayList<>();
        List<String> states = new CopyOnWriteArrayList<>();
        DiscoveryConfig d = DiscoveryConfig.nacos("127.0.0.1:" + dead + "," + nacos.address(), "com.example.NacosFailover:1.0",
                NacosOptions.defaults().withPollInterval(Duration.ofSeconds(1))).withConnectionTimeout(Duration.ofMillis(500));
        NacosHostSource src = closing(new NacosHostSource(d, () -> { }, clock));
        src.start(new HostSource.Sink() {
            @Override
            public void hosts(List<DiscoveredHost> hosts) {
                published.add(hosts);
            }

            @Override
            public void state(String state, boolean connected) {
                states.add(state);
            }
        });
        clock.runDue();
        assertThat(states).singleElement().asString().startsWith("unreachable (127.0.0.1:" + dead + ": ConnectException");
        assertThat(published).isEmpty();
        clock.advance(Duration.ofSeconds(1));
        assertThat(states).hasSize(2);
        assertThat(states.get(1)).isEqualTo("connected (" + nacos.address() + ")");
        assertThat(published).singleElement().asList().hasSize(1);
    }

    @Test
    void routeByRegistryFollowsEachServiceInNacos() throws Exception {
        String iface = "com.example.NacosRouted";
        Provider p = closing(new Provider());
        nacos.register(iface + ":DEFAULT", CLUSTER, "127.0.0.1", p.port(), 1.0, true,
                sofaMeta(100, System.currentTimeMillis() - 600_000, null, null));
        ClusterConfig template = ClusterConfig.builder().name("registry").protocol(Protocol.BOLT)
                .discovery(discovery("*", Duration.ofMillis(200))).connectTimeout(Duration.ofSeconds(1)).build();
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
        JsonNode child = JSON.readTree(r.body()).get("clusters").get(1);
        assertThat(child.get("name").asText()).isEqualTo("registry/" + iface);
        assertThat(child.get("discovery").get("type").asText()).isEqualTo("nacos");
        assertThat(child.get("hosts").get(0).get("source").asText()).isEqualTo("nacos");
        assertThat(child.get("hosts").get(0).get("address").asText()).isEqualTo("127.0.0.1:" + p.port());
    }

    @Test
    void everyNacosClusterOfAGatewaySharesTwoPollThreads() throws Exception {
        int services = 6;
        Provider p = closing(new Provider());
        List<ClusterConfig> clusters = new ArrayList<>();
        for (int i = 0; i < services; i++) {
            String iface = "com.example.Shared" + i;
            nacos.register(iface + ":DEFAULT", CLUSTER, "127.0.0.1", p.port(), 1.0, true,
                    sofaMeta(100, System.currentTimeMillis() - 600_000, null, null));
            clusters.add(ClusterConfig.builder().name("shared" + i).protocol(Protocol.BOLT)
                    .discovery(discovery(iface + ":1.0", Duration.ofMillis(200))).connectTimeout(Duration.ofSeconds(1)).build());
        }
        long before = nacosThreads();
        ListenerConfig l = ListenerConfig.builder().name("bolt").protocol(Protocol.BOLT)
                .bolt(BoltOptions.builder().defaultCluster("shared0").build()).build();
        Gateway gw = closing(GatewayFixture.start(GatewayConfig.builder().listeners(l).clusters(clusters)
                .admin(new AdminConfig(true, "127.0.0.1", 0, true))
                .transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                .drainTimeout(Duration.ofSeconds(2)).build()));
        for (int i = 0; i < services; i++) {
            String name = "shared" + i;
            await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20))
                    .until(() -> gw.cluster(name).hosts().size() == 1);
        }
        // a poll thread per cluster (and a JDK HttpClient selector thread each) would be 12 threads here
        assertThat(nacosThreads() - before).isLessThanOrEqualTo(2);
    }

    private static long nacosThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("sluice-nacos")).count();
    }
}
