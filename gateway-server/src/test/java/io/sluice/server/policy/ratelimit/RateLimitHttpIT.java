package io.sluice.server.policy.ratelimit;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.RateLimitConfig;
import io.sluice.core.config.RateLimitRule;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static io.sluice.server.testing.GatewayFixture.uri;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Local rate limits end to end over HTTP/1.1: JDK HttpClient → gateway → real backend. A route
 * limited to N per window answers the (N+1)th with 429 and Retry-After; other routes are not
 * touched; per-client-key buckets by header.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RateLimitHttpIT {

    private TestBackend backend;
    private Gateway gw;
    private HttpClient client;
    private final MeterRegistry registry = new SimpleMeterRegistry();

    @BeforeAll
    void start() throws Exception {
        backend = TestBackend.start();
        GatewayConfig base = GatewayFixture.simple(backend);
        GatewayConfig config = base.withListeners(List.of(base.listeners().get(0).withRoutes(List.of(
                        new RouteConfig("limited", RouteMatch.pathPrefix("/limited"), "c", null, null),
                        new RouteConfig("tenant", RouteMatch.pathPrefix("/tenant"), "c", null, null),
                        RouteConfig.to("c")))))
                .withRateLimit(RateLimitConfig.builder().rules(
                        RateLimitRule.perRoute("three-per-hour", 3, Duration.ofHours(1), "limited"),
                        RateLimitRule.perRoute("per-tenant", 2, Duration.ofHours(1), "tenant")
                                .withKey(RateLimitRule.Key.header("X-Tenant"))).build());
        gw = Gateway.builder().config(config).meterRegistry(registry).random(new SplittableRandom(7))
                .build().start().orTimeout(30, TimeUnit.SECONDS).join();
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
    }

    @AfterAll
    void stop() {
        gw.close();
        backend.close();
    }

    private HttpResponse<String> get(String path, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(gw, path)).timeout(Duration.ofSeconds(10));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private double count(String rule, String result) {
        var c = registry.find("sluice.ratelimit.requests").tags("rule", rule, "result", result).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void theRouteGetsExactlyItsTokensThen429WithRetryAfterAndOtherRoutesAreUntouched() throws Exception {
        for (int i = 0; i < 3; i++) {
            assertThat(get("/limited/" + i).statusCode()).isEqualTo(200);
        }
        HttpResponse<String> over = get("/limited/3");
        assertThat(over.statusCode()).isEqualTo(429);
        long retryAfter = Long.parseLong(over.headers().firstValue("retry-after").orElseThrow());
        assertThat(retryAfter).isBetween(3590L, 3600L); // the next token comes with the hour's refill
        assertThat(over.body()).contains("rate limited on route limited");
        assertThat(get("/limited/4").statusCode()).as("the connection stays usable").isEqualTo(429);
        for (int i = 0; i < 20; i++) {
            assertThat(get("/elsewhere/" + i).statusCode()).isEqualTo(200);
        }
        assertThat(count("three-per-hour", "allowed")).isEqualTo(3);
        assertThat(count("three-per-hour", "limited")).isEqualTo(2);
        var outcome = registry.find("sluice.requests").tags("route", "limited", "outcome", "rate_limited", "status", "4xx").counters();
        assertThat(outcome.stream().mapToDouble(c -> c.count()).sum()).isEqualTo(2);
    }

    @Test
    void reloadKeepsUnchangedRulesAndAppliesChangedOnes() throws Exception {
        GatewayConfig running = gw.config();
        RateLimitRule limited = running.rateLimit().rules().get(0);
        RateLimitRule tenant = running.rateLimit().rules().get(1);
        // a fresh key on the tenant rule, 1 of its 2 tokens spent before the reload
        assertThat(get("/tenant/r", "X-Tenant", "reload").statusCode()).isEqualTo(200);
        RateLimitRule route2 = RateLimitRule.perRoute("catch-all", 1, Duration.ofHours(1), "route2");
        gw.reload(running.withRateLimit(running.rateLimit().toBuilder().rules(limited, tenant, route2).build()));
        assertThat(get("/tenant/r", "X-Tenant", "reload").statusCode()).as("unchanged rule kept its bucket").isEqualTo(200);
        assertThat(get("/tenant/r", "X-Tenant", "reload").statusCode()).isEqualTo(429);
        assertThat(get("/other").statusCode()).as("the new rule applies").isEqualTo(200);
        assertThat(get("/other").statusCode()).isEqualTo(429);
        gw.reload(running); // back: the catch-all rule is gone with its meters
        assertThat(get("/other").statusCode()).isEqualTo(200);
        assertThat(get("/other").statusCode()).isEqualTo(200);
        assertThat(registry.find("sluice.ratelimit.requests").tags("rule", "catch-all").counters()).isEmpty();
    }

    @Test
    void perClientKeyByHeader() throws Exception {
        for (int i = 0; i < 2; i++) {
            assertThat(get("/tenant/a", "X-Tenant", "alpha").statusCode()).isEqualTo(200);
        }
        assertThat(get("/tenant/a", "X-Tenant", "alpha").statusCode()).isEqualTo(429);
        assertThat(get("/tenant/b", "x-tenant", "beta").statusCode()).as("another key, its own bucket").isEqualTo(200);
        assertThat(get("/tenant/b", "x-tenant", "beta").statusCode()).isEqualTo(200);
        assertThat(get("/tenant/b", "x-tenant", "beta").statusCode()).isEqualTo(429);
        for (int i = 0; i < 5; i++) {
            assertThat(get("/tenant/none").statusCode()).as("no key header: the rule does not apply").isEqualTo(200);
        }
        assertThat(registry.find("sluice.ratelimit.keys").tags("rule", "per-tenant").gauge().value()).isEqualTo(2);
    }
}
