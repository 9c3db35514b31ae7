package io.sluice.server.config;

import io.sluice.core.config.CircuitBreakerConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.RetryOn;
import io.sluice.core.config.RetryPolicyConfig;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code retry_policy} and {@code circuit_breakers}: native loading, rendering, validation with JSON paths, MOSN import. */
class PolicyConfigTest {

    private static final String NATIVE = """
            {"listeners": [{"name": "web", "port": 0, "routes": [{"cluster": "api", "timeout": "2s" /*R*/}]}],
             "clusters": [{"name": "api", "hosts": ["127.0.0.1:9000", "127.0.0.1:9001"] /*C*/}]}""";

    private static GatewayConfig load(String route, String cluster) {
        return ConfigLoader.parse(with(route, cluster), "t.json").config();
    }

    private static String with(String route, String cluster) {
        return NATIVE.replace("/*R*/", route == null ? "" : ", " + route).replace("/*C*/", cluster == null ? "" : ", " + cluster);
    }

    private static String error(String route, String cluster) {
        try {
            ConfigLoader.parse(with(route, cluster), "t.json");
        } catch (ConfigException e) {
            return e.getMessage();
        }
        throw new AssertionError("no error");
    }

    @Test
    void aRoutesRetryPolicyAndAClustersBreakersLoadWithDefaultsForWhatIsLeftOut() {
        GatewayConfig c = load("""
                "retry_policy": {"retry_on": "5xx, reset", "num_retries": 3, "per_try_timeout": "500ms",
                  "retry_back_off": {"base_interval": "10ms"}, "max_body_bytes": "128KiB", "include_attempt_count": true}""",
                """
                "retry_policy": {"retry_on": ["connect-failure"]},
                "circuit_breakers": {"max_requests": 100, "max_host_requests": 20,
                  "retry_budget": {"budget_percent": 25.5, "min_retry_concurrency": 5}}""");
        RetryPolicyConfig r = c.listeners().get(0).routes().get(0).retryPolicy();
        assertThat(r.retryOn()).containsExactlyInAnyOrder(RetryOn.FIVE_XX, RetryOn.RESET);
        assertThat(r.numRetries()).isEqualTo(3);
        assertThat(r.perTryTimeout()).isEqualTo(Duration.ofMillis(500));
        assertThat(r.baseInterval()).isEqualTo(Duration.ofMillis(10));
        assertThat(r.maxInterval()).as("10 x base").isEqualTo(Duration.ofMillis(100));
        assertThat(r.maxBodyBytes()).isEqualTo(128 * 1024);
        assertThat(r.includeAttemptCount()).isTrue();
        assertThat(r.retryNonIdempotent()).isFalse();
        RetryPolicyConfig cr = c.cluster("api").retryPolicy();
        assertThat(cr.retryOn()).containsExactly(RetryOn.CONNECT_FAILURE);
        assertThat(cr.numRetries()).isEqualTo(RetryPolicyConfig.DEFAULT_NUM_RETRIES);
        CircuitBreakerConfig b = c.cluster("api").circuitBreakers();
        assertThat(b).isEqualTo(new CircuitBreakerConfig(1024, 1024, 100, 25.5, 5, 20));
        // rendered and loaded back: equal
        assertThat(ConfigLoader.parse(ConfigJson.render(c), "r.json").config()).isEqualTo(c);
    }

    @Test
    void withoutThemThereAreNoRetriesAndEnvoysDefaultLimits() {
        GatewayConfig c = load(null, null);
        assertThat(c.listeners().get(0).routes().get(0).retryPolicy()).isNull();
        assertThat(c.cluster("api").retryPolicy()).isNull();
        assertThat(c.cluster("api").circuitBreakers()).isEqualTo(new CircuitBreakerConfig(1024, 1024, 1024, 20, 3, 0));
        // a Bolt connection carries up to 4096 requests: Bolt clusters default to 65536, also when the protocol comes late
        assertThat(ClusterConfig.builder().name("b").protocol(Protocol.BOLT).build().circuitBreakers().maxRequests())
                .isEqualTo(CircuitBreakerConfig.DEFAULT_BOLT_MAX_REQUESTS);
        assertThat(ClusterConfig.of("b", List.of()).withProtocol(Protocol.BOLT).circuitBreakers().maxRequests())
                .isEqualTo(CircuitBreakerConfig.DEFAULT_BOLT_MAX_REQUESTS);
        assertThat(PolicyJson.circuitBreakers(JsonObject.of(new com.fasterxml.jackson.databind.ObjectMapper().createObjectNode()
                .put("max_connections", 5), "$.c"), Protocol.BOLT).maxRequests()).isEqualTo(CircuitBreakerConfig.DEFAULT_BOLT_MAX_REQUESTS);
        assertThat(RetryPolicyConfig.defaults().retryOn()).isEqualTo(Set.of(RetryOn.CONNECT_FAILURE, RetryOn.REFUSED_STREAM));
    }

    @Test
    void badValuesAreRejectedWithTheirJsonPath() {
        String rp = "$.listeners[0].routes[0].retry_policy";
        assertThat(error("\"retry_policy\": {\"num_retries\": -1}", null)).startsWith(rp + ".num_retries: bad value -1");
        assertThat(error("\"retry_policy\": {\"num_retries\": 11}", null)).startsWith(rp + ".num_retries: bad value 11");
        assertThat(error("\"retry_policy\": {\"retry_on\": \"5xx,teapot\"}", null))
                .startsWith(rp + ".retry_on: bad value \"teapot\"").contains("gateway-error");
        assertThat(error("\"retry_policy\": {\"retry_on\": \"retriable-status-codes\"}", null))
                .startsWith(rp + ".retriable_status_codes:");
        assertThat(error("\"retry_policy\": {\"retry_on\": \"retriable-status-codes\", \"retriable_status_codes\": [409, 700]}", null))
                .startsWith(rp + ".retriable_status_codes[1]: bad value 700");
        assertThat(error("\"retry_policy\": {\"retry_back_off\": {\"base_interval\": \"100ms\", \"max_interval\": \"50ms\"}}", null))
                .startsWith(rp + ".retry_back_off.max_interval: bad value \"50ms\"");
        assertThat(error("\"retry_policy\": {\"per_try_timeout\": \"0s\"}", null)).startsWith(rp + ".per_try_timeout:");
        assertThat(error("\"retry_policy\": {\"retries\": 2}", null)).startsWith(rp + ".retries:");
        String cb = "$.clusters[0].circuit_breakers";
        assertThat(error(null, "\"circuit_breakers\": {\"retry_budget\": {\"budget_percent\": 120}}"))
                .startsWith(cb + ".retry_budget.budget_percent: bad value 120");
        assertThat(error(null, "\"circuit_breakers\": {\"retry_budget\": {\"min_retry_concurrency\": -1}}"))
                .startsWith(cb + ".retry_budget.min_retry_concurrency: bad value -1");
        assertThat(error(null, "\"circuit_breakers\": {\"max_requests\": 0}")).startsWith(cb + ".max_requests: bad value 0");
        assertThat(error(null, "\"circuit_breakers\": {\"max_pending_requests\": -5}"))
                .startsWith(cb + ".max_pending_requests: bad value -5");
    }

    private static final String MOSN = """
            {"servers": [{"listeners": [{"name": "l", "address": "127.0.0.1:2046",
               "filter_chains": [{"filters": [{"type": "proxy", "config": {"downstream_protocol": "Http1",
                 "upstream_protocol": "Http1", "router_config_name": "r"}}]}]}],
              "routers": [{"router_config_name": "r", "virtual_hosts": [{"name": "v", "domains": ["*"],
                 "routers": [{"match": {"prefix": "/"}, "route": {"cluster_name": "c",
                   "retry_policy": {"retry_on": true, "retry_timeout": "300ms", "num_retries": 2}}}]}]}]}],
             "cluster_manager": {"clusters": [{"name": "c", "type": "SIMPLE",
               "circuit_breakers": [{"priority": "DEFAULT", "max_connections": 100, "max_requests": 200, "max_retries": 4}],
               "hosts": [{"address": "127.0.0.1:8080"}]}]}}""";

    @Test
    void mosnRetryPoliciesAndThresholdsAreImported() {
        LoadedConfig loaded = ConfigLoader.parse(MOSN, "m.json");
        RetryPolicyConfig r = loaded.config().listeners().get(0).routes().get(0).retryPolicy();
        assertThat(r.retryOn()).containsExactly(RetryOn.FIVE_XX);
        assertThat(r.numRetries()).isEqualTo(2);
        assertThat(r.perTryTimeout()).isEqualTo(Duration.ofMillis(300));
        assertThat(loaded.warnings()).hasSize(1).allSatisfy(w -> assertThat(w).contains("retry_policy", "non-idempotent"));
        CircuitBreakerConfig b = loaded.config().cluster("c").circuitBreakers();
        assertThat(b).isEqualTo(new CircuitBreakerConfig(100, 1024, 200, 0, 4, 0));
        // the object form of MOSN's thresholds, and off switches
        String objectForm = MOSN.replace("\"circuit_breakers\": [{", "\"circuit_breakers\": {\"thresholds\": [{")
                .replace("\"max_retries\": 4}]", "\"max_retries\": 4}]}");
        assertThat(ConfigLoader.parse(objectForm, "m.json").config().cluster("c").circuitBreakers()).isEqualTo(b);
        assertThat(ConfigLoader.parse(MOSN.replace("\"retry_on\": true", "\"retry_on\": false"), "m.json").config()
                .listeners().get(0).routes().get(0).retryPolicy()).isNull();
        assertThat(List.of(ConfigLoader.parse(MOSN.replace("\"num_retries\": 2", "\"num_retries\": 0"), "m.json")
                .config().listeners().get(0).routes().get(0))).allSatisfy(rc -> assertThat(rc.retryPolicy()).isNull());
    }
}
