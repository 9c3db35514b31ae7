package io.sluice.server.policy.ratelimit;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.core.config.RateLimitConfig;
import io.sluice.core.config.RateLimitRule;
import io.sluice.core.config.RateLimitRule.Key;
import io.sluice.core.config.RateLimitRule.KeyKind;
import io.sluice.core.time.ManualScheduler;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Which requests a rule looks at and which bucket they share: every key kind, HTTP and Bolt. */
class RuleTest {

    private final ManualScheduler clock = new ManualScheduler();

    private Rule rule(RateLimitRule r) {
        return new Rule(r, RateLimitConfig.builder().rules(r).maxKeys(100).build(), new SimpleMeterRegistry(), clock, null);
    }

    private static RateLimitRule base(Key key) {
        return RateLimitRule.perRoute("r", 1, Duration.ofHours(1)).withKey(key);
    }

    @Test
    void keysPerKind() throws Exception {
        InetSocketAddress peer = new InetSocketAddress(InetAddress.getByName("10.1.2.3"), 4711);
        Map<String, String> http = Map.of("x-tenant", "acme");
        Map<String, String> bolt = Map.of("X-Tenant", "bolt-acme");
        Rule none = rule(base(Key.NONE));
        assertThat(none.key(http::get, peer, false, null, null)).isSameAs(none.key(http::get, null, true, "s", "m"));
        Rule ip = rule(base(Key.CLIENT_ADDRESS));
        assertThat(ip.key(http::get, peer, false, null, null)).isEqualTo(InetAddress.getByName("10.1.2.3"));
        Rule header = rule(base(Key.header("X-Tenant")));
        assertThat(header.key(http::get, peer, false, null, null)).as("HTTP: lower-case lookup").isEqualTo("acme");
        assertThat(header.key(bolt::get, peer, true, "s", "m")).as("Bolt: the exact key").isEqualTo("bolt-acme");
        assertThat(header.key(Map.<String, String>of()::get, peer, false, null, null)).as("absent: not limited").isNull();
        Rule service = rule(base(new Key(KeyKind.SERVICE, null)));
        assertThat(service.key(http::get, peer, true, "svc:1.0", "m")).isEqualTo("svc:1.0");
        assertThat(service.key(http::get, peer, false, null, null)).as("HTTP has no service").isNull();
        Rule method = rule(base(new Key(KeyKind.METHOD, null)));
        assertThat(method.key(http::get, peer, true, "svc:1.0", "get")).isEqualTo("svc:1.0#get");
    }

    @Test
    void boltConditionsNeverMatchHttp() {
        Rule r = rule(base(Key.NONE).withBolt("svc:1.0", "create"));
        assertThat(r.matches(true, "svc:1.0", "create")).isTrue();
        assertThat(r.matches(true, "svc:1.0", "delete")).isFalse();
        assertThat(r.matches(true, "other", "create")).isFalse();
        assertThat(r.matches(false, null, null)).isFalse();
        Rule any = rule(base(Key.NONE));
        assertThat(any.matches(false, null, null)).isTrue();
        assertThat(any.matches(true, "x", "y")).isTrue();
    }

    @Test
    void oneBucketPerKey() {
        Rule r = rule(base(Key.header("x-k")));
        assertThat(r.acquire("a", 0)).isEqualTo(Limiter.ALLOWED);
        assertThat(r.acquire("a", 0)).isNotEqualTo(Limiter.ALLOWED);
        assertThat(r.acquire("b", 0)).isEqualTo(Limiter.ALLOWED);
    }
}
