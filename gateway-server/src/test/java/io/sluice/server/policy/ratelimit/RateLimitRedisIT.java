package io.sluice.server.policy.ratelimit;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.RateLimitConfig;
import io.sluice.core.config.RateLimitRule;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.Ports;
import io.sluice.server.testing.RedisServer;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Global rate limits with a REAL redis-server started here: two embedded gateways share one
 * budget per key; Redis killed → traffic continues (fail open) and the metrics say so; Redis back
 * → enforcement resumes within a few seconds, by itself.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RateLimitRedisIT {

    private static final int BUDGET = 20;

    private RedisServer redis;
    private TestBackend backend;
    private Gateway a;
    private Gateway b;
    private final MeterRegistry ra = new SimpleMeterRegistry();
    private final MeterRegistry rb = new SimpleMeterRegistry();
    private HttpClient client;

    @BeforeAll
    void start() throws Exception {
        redis = RedisServer.start(Ports.free());
        backend = TestBackend.start();
        RateLimitConfig rl = RateLimitConfig.builder()
                .redis(RateLimitConfig.RedisConfig.of("127.0.0.1", redis.port()).withLeaseSize(4)
                        .withTimeout(Duration.ofSeconds(1)) // a loaded 2-core CI box: no spurious "down"
                        .withReconnect(Duration.ofMillis(100), Duration.ofMillis(800))
                        .withKeyPrefix("sluice-it:" + System.nanoTime() + ":"))
                .rules(RateLimitRule.perRoute("tenant", BUDGET, Duration.ofHours(1))
                        .withKey(RateLimitRule.Key.header("x-tenant")).withGlobal(true))
                .build();
        GatewayConfig config = GatewayFixture.simple(backend).withRateLimit(rl);
        a = Gateway.builder().config(config).meterRegistry(ra).random(new SplittableRandom(1))
                .build().start().orTimeout(30, TimeUnit.SECONDS).join();
        b = Gateway.builder().config(config).meterRegistry(rb).random(new SplittableRandom(2))
                .build().start().orTimeout(30, TimeUnit.SECONDS).join();
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
        awaitRedis(1, Duration.ofSeconds(10));
    }

    @AfterAll
    void stop() throws Exception {
        a.close();
        b.close();
        backend.close();
        redis.close();
    }

    private void awaitRedis(double up, Duration within) {
        await().atMost(within).pollInterval(Duration.ofMillis(20)).until(() -> gauge(ra) == up && gauge(rb) == up);
    }

    private static double gauge(MeterRegistry r) {
        var g = r.find("sluice.ratelimit.redis.up").gauge();
        return g == null ? -1 : g.value();
    }

    private static double count(MeterRegistry r, String result) {
        var c = r.find("sluice.ratelimit.requests").tags("rule", "tenant", "result", result).counter();
        return c == null ? 0 : c.count();
    }

    private int status(Gateway gw, String tenant) throws Exception {
        return client.send(HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + gw.port("web") + "/x"))
                .header("x-tenant", tenant).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    /** Sends {@code n} requests alternating between the two gateways; returns how many got 200. */
    private int alternate(String tenant, int n) throws Exception {
        int ok = 0;
        for (int i = 0; i < n; i++) {
            int s = status(i % 2 == 0 ? a : b, tenant);
            assertThat(s).isIn(200, 429);
            if (s == 200) {
                ok++;
            }
        }
        return ok;
    }

    private double failOpen() {
        return count(ra, "failopen") + count(rb, "failopen");
    }

    @Test
    void twoGatewaysShareOneBudgetFailOpenWhileRedisIsDownAndRecoverByThemselves() throws Exception {
        // 1. one budget of 20 for the fleet of two; only a key's very first request on each gateway may
        //    pass on the failure mode (its first lease is in flight: never wait)
        double fo0 = failOpen();
        int admitted = alternate("acme", 3 * BUDGET);
        double firstLeases = failOpen() - fo0;
        assertThat(firstLeases).isLessThanOrEqualTo(2);
        assertThat(admitted).isEqualTo(BUDGET + (int) firstLeases);
        assertThat(count(ra, "allowed") + count(rb, "allowed")).isEqualTo(BUDGET);
        assertThat(count(ra, "allowed")).as("both spent from it").isPositive();
        assertThat(count(rb, "allowed")).isPositive();
        assertThat(alternate("globex", 2)).as("another key, its own budget").isEqualTo(2);

        // 2. Redis dies mid-load: requests keep flowing (fail open), the gauge and counter say so
        redis.kill();
        awaitRedis(0, Duration.ofSeconds(5));
        double before = failOpen();
        assertThat(alternate("initech", 10)).as("fail open").isEqualTo(10);
        assertThat(failOpen() - before).isEqualTo(10);
        assertThat(alternate("acme", 4)).as("a bucket Redis said is empty stays limited").isZero();

        // 3. Redis back (empty): the links reconnect on their own (back-off capped at 800 ms) and the
        //    budget is enforced again
        long t0 = System.nanoTime();
        redis.restart();
        awaitRedis(1, Duration.ofSeconds(5));
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(5000);
        double fo1 = failOpen();
        int again = alternate("hooli", 3 * BUDGET);
        double first = failOpen() - fo1;
        assertThat(first).isLessThanOrEqualTo(2);
        assertThat(again).isEqualTo(BUDGET + (int) first);

        // 4. Redis stops answering (SIGSTOP: connections stay open): the lease timeout (1 s here) marks
        //    it down, requests never wait for it; SIGCONT → up again by itself
        redis.pause(true);
        try {
            long s0 = System.nanoTime();
            double fo2 = failOpen();
            assertThat(alternate("umbrella", 6)).as("no answer yet: the failure mode, at once").isEqualTo(6);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - s0)).as("never waited for Redis").isLessThan(900);
            awaitRedis(0, Duration.ofSeconds(5));
            assertThat(failOpen() - fo2).as("each counted as failopen").isEqualTo(6);
        } finally {
            redis.pause(false);
        }
        awaitRedis(1, Duration.ofSeconds(6));
        assertThat(ra.find("sluice.ratelimit.redis.failures").functionCounter().count()).isPositive();
    }
}
