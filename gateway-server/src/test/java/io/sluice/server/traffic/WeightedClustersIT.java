package io.sluice.server.traffic;

import io.sluice.core.config.GatewayConfig;
import io.sluice.server.Gateway;
import io.sluice.server.config.ConfigLoader;
import io.sluice.server.testing.SocketServer;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Weighted clusters, sticky splits and hash balancing over real sockets: TestBackends behind the
 * gateway, the JDK HttpClient in front. Each backend answers {@code ok from PORT}.
 */
class WeightedClustersIT {

    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private TestBackend stable;
    private TestBackend canary;
    private TestBackend third;
    private Gateway gw;

    @BeforeEach
    void backends() throws Exception {
        stable = TestBackend.start();
        canary = TestBackend.start();
        third = TestBackend.start();
    }

    @AfterEach
    void stop() {
        for (AutoCloseable c : new AutoCloseable[] {gw, stable, canary, third}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                // best effort
            }
        }
    }

    /** Listener "web" with one route (its JSON given), clusters "stable", "canary" and "ring" (all three backends). */
    private GatewayConfig config(String route, String ringLb) {
        String json = """
                {
                  "listeners": [{"name": "web", "port": 0, "routes": [%s]}],
                  "clusters": [
                    {"name": "stable", "hosts": ["127.0.0.1:%d"]},
                    {"name": "canary", "hosts": ["127.0.0.1:%d"]},
                    {"name": "ring", "lb": "%s", "hosts": ["127.0.0.1:%d", "127.0.0.1:%d", "127.0.0.1:%d"]}
                  ],
                  "admin": {"enabled": false}, "drain_timeout": "200ms",
                  "transport": {"worker_threads": 2}
                }
                """.formatted(route, stable.port(), canary.port(), ringLb, stable.port(), canary.port(), third.port());
        return ConfigLoader.parse(json, "test").config();
    }

    private static String split(int stableWeight, int canaryWeight) {
        return """
                {"weighted_clusters": {"clusters": [{"name": "stable", "weight": %d}, {"name": "canary", "weight": %d}]}}
                """.formatted(stableWeight, canaryWeight);
    }

    private void start(GatewayConfig c) {
        gw = Gateway.builder().config(c).random(new SplittableRandom(7)).build().start()
                .orTimeout(30, TimeUnit.SECONDS).join();
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + gw.port("web") + path);
    }

    private HttpResponse<String> get(String path, String header, String value) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(10));
        if (header != null) {
            b.header(header, value);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Sends {@code n} GETs from {@code threads} threads; counts bodies, and non-200 answers under "failed". */
    private Map<String, Integer> load(int n, int threads) throws Exception {
        Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                fs.add(pool.submit(() -> {
                    while (next.getAndIncrement() < n) {
                        HttpResponse<String> r = get("/", null, null);
                        String key = r.statusCode() == 200 ? r.body() : "failed " + r.statusCode();
                        counts.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        Map<String, Integer> out = new HashMap<>();
        counts.forEach((k, v) -> out.put(k, v.get()));
        return out;
    }

    private String body(TestBackend b) {
        return "ok from " + b.port();
    }

    @Test
    void tenThousandRequestsSplitNinetyTenWithinOnePercent() throws Exception {
        start(config(split(90, 10), "ring_hash"));
        Map<String, Integer> counts = load(10_000, 4);
        assertThat(counts).containsOnlyKeys(body(stable), body(canary));
        assertThat(counts.get(body(stable))).isBetween(8_900, 9_100);
        assertThat(counts.get(body(canary))).isBetween(900, 1_100);
        // the schedule is exact: every request picked once, so exactly 9 000 / 1 000
        assertThat(counts.get(body(canary))).isEqualTo(1_000);
        // upstream meters count each request on the cluster that served it
        assertThat(gw.meterRegistry().get("sluice.upstream.requests").tag("cluster", "canary").counter().count()).isEqualTo(1_000);
        assertThat(gw.meterRegistry().get("sluice.upstream.requests").tag("cluster", "stable").counter().count()).isEqualTo(9_000);
    }

    @Test
    void reloadsMoveTheSplitUnderLoadWithoutAFailedRequest() throws Exception {
        start(config(split(99, 1), "ring_hash"));
        AtomicBoolean running = new AtomicBoolean(true);
        Map<String, AtomicLong> counts = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<?>> fs = new ArrayList<>();
        try {
            for (int t = 0; t < 4; t++) {
                fs.add(pool.submit(() -> {
                    while (running.get()) {
                        HttpResponse<String> r = get("/download?bytes=20000", null, null);
                        String key = r.statusCode() == 200 && r.body().length() == 20_000 ? "ok" : "failed " + r.statusCode();
                        counts.computeIfAbsent(key, k -> new AtomicLong()).incrementAndGet();
                    }
                    return null;
                }));
            }
            int[][] steps = {{50, 50}, {0, 100}, {99, 1}, {0, 100}};
            for (int[] s : steps) {
                Thread.sleep(150);
                assertThat(gw.reload(config(split(s[0], s[1]), "ring_hash")).unchanged()).isFalse();
            }
            Thread.sleep(150);
        } finally {
            running.set(false);
            for (Future<?> f : fs) {
                f.get(30, TimeUnit.SECONDS);
            }
            pool.shutdownNow();
        }
        assertThat(counts).containsOnlyKeys("ok");
        assertThat(counts.get("ok").get()).isGreaterThan(20);
        // 0/100 now: everything goes to the canary
        int before = stable.requests();
        Map<String, Integer> after = load(50, 2);
        assertThat(after).containsOnlyKeys(body(canary));
        assertThat(stable.requests()).isEqualTo(before);
    }

    @Test
    void aStickySplitKeepsEachUserOnOneSide() throws Exception {
        String route = """
                {"weighted_clusters": {"clusters": [{"name": "stable", "weight": 50}, {"name": "canary", "weight": 50}],
                                       "sticky": true},
                 "hash_policy": [{"header": "x-user"}]}
                """;
        start(config(route, "ring_hash"));
        Map<String, Integer> sides = new HashMap<>();
        for (int u = 0; u < 40; u++) {
            String first = get("/", "x-user", "user-" + u).body();
            for (int i = 0; i < 5; i++) {
                assertThat(get("/", "x-user", "user-" + u).body()).as("user-%d", u).isEqualTo(first);
            }
            sides.merge(first, 1, Integer::sum);
        }
        assertThat(sides).containsOnlyKeys(body(stable), body(canary)); // both sides have users
        // without the key the split is the exact schedule again
        Map<String, Integer> anon = load(100, 1);
        assertThat(anon.get(body(canary))).isEqualTo(50);
    }

    @Test
    void ringHashAndMaglevKeepACookieOnOneHost() throws Exception {
        String route = "{\"cluster\": \"ring\", \"hash_policy\": [{\"cookie\": \"sid\"}, {\"client_address\": true}]}";
        start(config(route, "ring_hash"));
        for (String lb : new String[] {"ring_hash", "maglev"}) {
            gw.reload(config(route, lb)); // the second round reloads the cluster from ring_hash to maglev
            Map<String, Integer> hosts = new HashMap<>();
            for (int s = 0; s < 30; s++) {
                String first = get("/", "cookie", "theme=dark; sid=s" + s).body();
                for (int i = 0; i < 3; i++) {
                    assertThat(get("/", "cookie", "sid=s" + s + "; x=1").body()).as("%s sid s%d", lb, s).isEqualTo(first);
                }
                hosts.merge(first, 1, Integer::sum);
            }
            assertThat(hosts).as(lb).hasSize(3);
            // no cookie: the client address is the key, the same for every request from 127.0.0.1
            Map<String, Integer> byAddress = load(20, 1);
            assertThat(byAddress).as(lb).hasSize(1);
        }
    }

    @Test
    void aRequestInFlightFinishesOnItsSideWhenAReloadMovesAllTrafficAway() throws Exception {
        CountDownLatch arrived = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try (SocketServer slow = new SocketServer("slow", 50, (sock, i) -> {
            InputStream in = sock.getInputStream();
            while (SocketServer.readRequestHead(in) != null) {
                arrived.countDown();
                release.await(10, TimeUnit.SECONDS);
                sock.getOutputStream().write("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nslow".getBytes(StandardCharsets.US_ASCII));
                sock.getOutputStream().flush();
            }
        })) {
            String json = """
                    {"listeners": [{"name": "web", "port": 0, "routes": [
                       {"weighted_clusters": {"clusters": [{"name": "old", "weight": %d}, {"name": "canary", "weight": %d}]}}]}],
                     "clusters": [{"name": "old", "hosts": ["127.0.0.1:%d"]}, {"name": "canary", "hosts": ["127.0.0.1:%d"]}],
                     "admin": {"enabled": false}, "drain_timeout": "200ms", "transport": {"worker_threads": 1}}
                    """;
            start(ConfigLoader.parse(json.formatted(100, 0, slow.port(), canary.port()), "t").config());
            CompletableFuture<HttpResponse<String>> inFlight = client.sendAsync(
                    HttpRequest.newBuilder(uri("/")).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(arrived.await(10, TimeUnit.SECONDS)).isTrue();
            gw.reload(ConfigLoader.parse(json.formatted(0, 100, slow.port(), canary.port()), "t").config());
            assertThat(get("/", null, null).body()).isEqualTo(body(canary)); // new requests: the canary
            release.countDown();
            HttpResponse<String> r = inFlight.get(10, TimeUnit.SECONDS);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("slow"); // the old request finished where it started
        }
    }
}
