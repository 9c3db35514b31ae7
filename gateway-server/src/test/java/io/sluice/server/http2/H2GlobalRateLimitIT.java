package io.sluice.server.http2;

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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A global (Redis) rate limit on HTTP/2 streams, with a REAL redis-server: the key's budget is
 * enforced across streams of one connection, plain streams get 429 and gRPC calls UNAVAILABLE.
 */
@Timeout(60)
class H2GlobalRateLimitIT {

    private static final int BUDGET = 5;

    @Test
    void streamsShareTheRedisBudget() throws Exception {
        try (RedisServer redis = RedisServer.start(Ports.free()); TestBackend backend = TestBackend.start()) {
            RateLimitConfig rl = RateLimitConfig.builder()
                    .redis(RateLimitConfig.RedisConfig.of("127.0.0.1", redis.port()).withLeaseSize(1)
                            .withTimeout(Duration.ofSeconds(1)).withKeyPrefix("sluice-h2:" + System.nanoTime() + ":"))
                    .rules(RateLimitRule.perRoute("tenant", BUDGET, Duration.ofHours(1))
                            .withKey(RateLimitRule.Key.header("x-tenant")).withGlobal(true))
                    .build();
            GatewayConfig config = GatewayFixture.simple(backend).withRateLimit(rl);
            MeterRegistry registry = new SimpleMeterRegistry();
            Gateway gw = Gateway.builder().config(config).meterRegistry(registry).random(new SplittableRandom(1))
                    .build().start().orTimeout(30, TimeUnit.SECONDS).join();
            try (H2TestClient c = new H2TestClient(gw.port("web"))) {
                await().atMost(Duration.ofSeconds(10)).until(() -> {
                    var g = registry.find("sluice.ratelimit.redis.up").gauge();
                    return g != null && g.value() == 1;
                });
                int ok = 0;
                for (int i = 0; i < 3 * BUDGET; i++) {
                    H2TestClient.Response r = c.exchange(H2TestClient.get("/x").set("x-tenant", "acme"), null);
                    assertThat(r.status()).isIn(200, 429);
                    if (r.status() == 200) {
                        ok++;
                    } else {
                        assertThat(r.header("retry-after")).isNotNull();
                    }
                }
                double failOpen = count(registry, "failopen");
                assertThat(failOpen).as("at most the key's first lease in flight").isLessThanOrEqualTo(1);
                assertThat(ok).isEqualTo(BUDGET + (int) failOpen);
                H2TestClient.Response g = c.exchange(H2TestClient.post("/svc.S/M").set("content-type", "application/grpc")
                        .set("x-tenant", "acme"), null);
                assertThat(g.header("grpc-status")).isEqualTo("14");
                assertThat(g.header("grpc-message")).contains("rate limited");
                assertThat(c.exchange(H2TestClient.get("/x").set("x-tenant", "other"), null).status())
                        .as("another key has its own budget").isEqualTo(200);
            } finally {
                gw.close();
            }
        }
    }

    private static double count(MeterRegistry r, String result) {
        var c = r.find("sluice.ratelimit.requests").tags("rule", "tenant", "result", result).counter();
        return c == null ? 0 : c.count();
    }
}
