package io.sluice.server.policy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.core.config.CircuitBreakerConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.time.ManualScheduler;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.LbContext;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/** What {@code GET /clusters} and the status page say about a cluster's breakers. */
class BreakerStatusTest {

    @Test
    void remainingCapacityAndOpenBreakersAreShown() {
        ClusterConfig cc = ClusterConfig.builder().name("api").hosts(List.of(new HostConfig("127.0.0.1", 9000, 1)))
                .circuitBreakers(CircuitBreakerConfig.builder().maxRequests(2).build()).build();
        ClusterBalancer c = ClusterBalancer.create(cc, new LbContext(new ManualScheduler(0), new SplittableRandom(1)));
        ClusterPolicies p = ClusterPolicies.of(c);
        assertThat(ClusterPolicies.of(c)).as("one per cluster").isSameAs(p);
        p.breaker().tryRequest();
        p.breaker().tryRequest();
        p.breaker().tryRequest(); // shed
        p.retries.add(4);
        ObjectNode n = new ObjectMapper().createObjectNode();
        BreakerStatus.json(n, c);
        assertThat(n.at("/circuit_breakers/requests/max").asInt()).isEqualTo(2);
        assertThat(n.at("/circuit_breakers/requests/remaining").asInt()).isZero();
        assertThat(n.at("/circuit_breakers/requests/open").asBoolean()).isTrue();
        assertThat(n.at("/circuit_breakers/requests/overflows").asLong()).isEqualTo(1);
        assertThat(n.at("/circuit_breakers/connections/remaining").asInt()).isEqualTo(1024);
        assertThat(n.at("/circuit_breakers/retries/max").asInt()).as("the budget's floor").isEqualTo(3);
        assertThat(n.at("/retries/retried").asLong()).isEqualTo(4);
        assertThat(BreakerStatus.line(c)).contains("requests 0/2 left (OPEN)", "connections 1024/1024 left");
        c.close();
    }

    @Test
    void aReloadThatKeepsTheClusterKeepsItsCountsAndAppliesTheNewLimits() {
        ClusterConfig cc = ClusterConfig.builder().name("api").hosts(List.of(new HostConfig("127.0.0.1", 9000, 1)))
                .circuitBreakers(CircuitBreakerConfig.builder().maxRequests(5).build()).build();
        ClusterBalancer c = ClusterBalancer.create(cc, new LbContext(new ManualScheduler(0), new SplittableRandom(1)));
        ClusterPolicies p = ClusterPolicies.of(c);
        for (int i = 0; i < 4; i++) {
            assertThat(p.breaker().tryRequest()).isTrue();
        }
        p.breaker().tryRetry();
        c.update(cc.toBuilder().circuitBreakers(CircuitBreakerConfig.builder().maxRequests(3).build()).build());
        ClusterPolicies after = ClusterPolicies.of(c); // what compiling the reloaded routes does
        assertThat(after).isSameAs(p);
        assertThat(after.breaker().requests().count()).as("requests in flight keep their slots").isEqualTo(4);
        assertThat(after.breaker().retries().count()).as("and so do retries").isEqualTo(1);
        assertThat(after.breaker().requests().max()).isEqualTo(3);
        assertThat(after.breaker().tryRequest()).isFalse();
        c.close();
    }
}
