package io.sluice.server.config;

import io.sluice.core.config.ConfigException;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.RateLimitRule;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The native {@code rate_limit} section: values, defaults, and bad values rejected with their JSON path. */
class RateLimitConfigTest {

    private static String config(String rateLimit) {
        return """
                {"listeners": [{"name": "web", "port": 0, "routes": [
                    {"name": "api", "match": {"path": {"prefix": "/api"}}, "cluster": "c"},
                    {"cluster": "c"}]}],
                 "clusters": [{"name": "c", "hosts": ["127.0.0.1:9"]}],
                 "rate_limit": %s}
                """.formatted(rateLimit);
    }

    private static GatewayConfig parse(String rateLimit) {
        return ConfigLoader.parse(config(rateLimit), "test").config();
    }

    @Test
    void readsRulesKeysAndRedis() {
        GatewayConfig c = parse("""
                {"max_keys": 500, "key_idle_timeout": "30s",
                 "redis": {"address": "127.0.0.1:6390", "lease_size": 5, "timeout": "20ms", "failure_mode_deny": true},
                 "rules": [
                   {"name": "api", "routes": ["api"], "max_tokens": 10, "fill_interval": "1s"},
                   {"name": "tenant", "routes": ["api", "route1"], "key": {"kind": "header", "header": "X-Tenant"},
                    "max_tokens": 100, "tokens_per_fill": 10, "fill_interval": "100ms", "global": true},
                   {"name": "ip", "key": "client_address", "max_tokens": 5, "fill_interval": 1000}]}""");
        var rl = c.rateLimit();
        assertThat(rl.maxKeys()).isEqualTo(500);
        assertThat(rl.keyIdleTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(rl.redis().port()).isEqualTo(6390);
        assertThat(rl.redis().leaseSize()).isEqualTo(5);
        assertThat(rl.redis().failureModeDeny()).isTrue();
        RateLimitRule api = rl.rules().get(0);
        assertThat(api.tokensPerFill()).as("defaults to max_tokens").isEqualTo(10);
        assertThat(api.key()).isEqualTo(RateLimitRule.Key.NONE);
        assertThat(rl.rules().get(1).key()).isEqualTo(RateLimitRule.Key.header("X-Tenant"));
        assertThat(rl.rules().get(1).global()).isTrue();
        assertThat(rl.rules().get(2).key().kind()).isEqualTo(RateLimitRule.KeyKind.CLIENT_ADDRESS);
        assertThat(rl.rules().get(2).fillInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(parse("{}").rateLimit().enabled()).isFalse();
        // GET /config renders it so that it reads back the same (the config hash and ReloadIT rely on it)
        assertThat(ConfigLoader.parse(ConfigJson.render(c), "rendered").config()).isEqualTo(c);
        assertThat(ConfigJson.render(parse("{}"))).doesNotContain("rate_limit");
    }

    private static void rejects(String rateLimit, String path, String... words) {
        assertThatThrownBy(() -> parse(rateLimit)).isInstanceOf(ConfigException.class)
                .satisfies(e -> {
                    assertThat(((ConfigException) e).path()).isEqualTo(path);
                    for (String w : words) {
                        assertThat(e.getMessage()).contains(w);
                    }
                });
    }

    @Test
    void badValuesNameTheirPath() {
        rejects("{\"rules\": [{\"name\": \"a\", \"max_tokens\": 10, \"fill_interval\": \"0s\"}]}",
                "$.rate_limit.rules[0].fill_interval", "1ms");
        rejects("{\"rules\": [{\"name\": \"a\", \"max_tokens\": -1, \"fill_interval\": \"1s\"}]}",
                "$.rate_limit.rules[0].max_tokens", "-1");
        rejects("{\"rules\": [{\"name\": \"a\", \"max_tokens\": 5, \"tokens_per_fill\": -2, \"fill_interval\": \"1s\"}]}",
                "$.rate_limit.rules[0].tokens_per_fill", "-2");
        rejects("{\"rules\": [{\"name\": \"a\", \"max_tokens\": 5, \"fill_interval\": \"1s\", \"key\": \"tls_identity\"}]}",
                "$.rate_limit.rules[0].key", "client_address", "not supported yet");
        rejects("{\"rules\": [{\"name\": \"a\", \"max_tokens\": 5, \"fill_interval\": \"1s\", \"key\": {\"kind\": \"header\"}}]}",
                "$.rate_limit.rules[0].key.header");
        rejects("{\"rules\": [{\"name\": \"a\", \"max_tokens\": 5, \"fill_interval\": \"1s\", \"routes\": [\"nope\"]}]}",
                "$.rate_limit.rules[0].routes[0]", "api", "route1");
        rejects("{\"rules\": [{\"name\": \"a\", \"max_tokens\": 5, \"fill_interval\": \"1s\", \"global\": true}]}",
                "$.rate_limit.rules[0].global", "redis");
        rejects("{\"rules\": [{\"name\": \"a\", \"max_tokens\": 5, \"fill_intervall\": \"1s\"}]}",
                "$.rate_limit.rules[0].fill_intervall", "fill_interval");
        rejects("{\"rules\": [{\"name\": \"a\", \"max_tokens\": 5}]}", "$.rate_limit.rules[0].fill_interval");
        rejects("{\"redis\": {\"address\": \"localhost\"}}", "$.rate_limit.redis.address", "host:port");
        rejects("{\"rules\": [{\"name\": \"a\", \"max_tokens\": 5, \"fill_interval\": \"1s\"},"
                + " {\"name\": \"a\", \"max_tokens\": 5, \"fill_interval\": \"1s\"}]}", "$.rate_limit.rules[1].name");
    }

    @Test
    void mosnRateLimitStreamFilterIsAnErrorWithItsPath() {
        String mosn = """
                {"servers": [{"listeners": [{"name": "l", "address": "127.0.0.1:2046",
                   "stream_filters": [{"type": "ratelimit", "config": {"rate": 10}}],
                   "filter_chains": [{"filters": [{"type": "proxy", "config": {"downstream_protocol": "Http1",
                     "router_config_name": "r"}}]}]}],
                  "routers": [{"router_config_name": "r", "virtual_hosts": [{"name": "v", "domains": ["*"],
                     "routers": [{"match": {"prefix": "/"}, "route": {"cluster_name": "c"}}]}]}]}],
                 "cluster_manager": {"clusters": [{"name": "c", "type": "SIMPLE", "lb_type": "LB_ROUNDROBIN",
                   "hosts": [{"address": "127.0.0.1:9"}]}]}}
                """;
        assertThatThrownBy(() -> ConfigLoader.parse(mosn, "mosn")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("$.servers[0].listeners[0].stream_filters").hasMessageContaining("rate limiting");
    }
}
