package io.sluice.server.route;

import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HashPolicy;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.TrafficPolicy;
import io.sluice.core.config.WeightedCluster;
import io.sluice.core.config.WeightedClusters;
import io.sluice.core.time.ManualScheduler;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.Hashing;
import io.sluice.lb.LbContext;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

class RouteTrafficTest {

    @Test
    void cookiesAreFoundByExactName() {
        assertThat(RouteTraffic.cookie("sid=abc", "sid")).isEqualTo("abc");
        assertThat(RouteTraffic.cookie("theme=dark; sid=abc; x=1", "sid")).isEqualTo("abc");
        assertThat(RouteTraffic.cookie("theme=dark;sid=\"q v\"", "sid")).isEqualTo("q v");
        assertThat(RouteTraffic.cookie("xsid=1; sidx=2", "sid")).isNull();
        assertThat(RouteTraffic.cookie("sid=", "sid")).isEmpty();
        assertThat(RouteTraffic.cookie("flag; sid=7", "sid")).isEqualTo("7");
        assertThat(RouteTraffic.cookie(null, "sid")).isNull();
    }

    @Test
    void theFirstPolicyWithAValueIsTheKey() {
        ManualScheduler clock = new ManualScheduler();
        LbContext ctx = new LbContext(clock, new SplittableRandom(1));
        ClusterBalancer a = ClusterBalancer.create(ClusterConfig.of("a", List.of(HostConfig.parse("10.0.0.1:80", 1))), ctx);
        ClusterBalancer b = ClusterBalancer.create(ClusterConfig.of("b", List.of(HostConfig.parse("10.0.0.2:80", 1))), ctx);
        TrafficPolicy p = TrafficPolicy.of(new WeightedClusters(List.of(new WeightedCluster("a", 1), new WeightedCluster("b", 1)), true),
                List.of(HashPolicy.header("x-user"), HashPolicy.cookie("sid"), HashPolicy.clientAddress()), null);
        RouteTraffic t = RouteTraffic.compile(p, Map.of("a", a, "b", b));
        Map<String, String> h = Map.of("x-user", "u1", "cookie", "sid=s1");
        assertThat(t.key(h::get, null, () -> "10.1.1.1")).isEqualTo(Hashing.hash("u1"));
        assertThat(t.key(Map.of("cookie", "sid=s1")::get, null, () -> "10.1.1.1")).isEqualTo(Hashing.hash("s1"));
        assertThat(t.key(Map.<String, String>of()::get, null, () -> "10.1.1.1")).isEqualTo(Hashing.hash("10.1.1.1"));
        // sticky: a key always lands on the same side
        long k = Hashing.hash("u1");
        ClusterBalancer side = t.cluster(a, k);
        for (int i = 0; i < 10; i++) {
            assertThat(t.cluster(a, k)).isSameAs(side);
        }
        // without a key the exact schedule alternates
        assertThat(List.of(t.cluster(a, Hashing.NO_KEY), t.cluster(a, Hashing.NO_KEY))).containsExactlyInAnyOrder(a, b);
        // the Bolt service source
        RouteTraffic svc = RouteTraffic.compile(TrafficPolicy.of(null, List.of(new HashPolicy(HashPolicy.Kind.SERVICE, null)), null),
                Map.of());
        assertThat(svc.key(n -> null, "com.example.Order", () -> "x")).isEqualTo(Hashing.hash("com.example.Order"));
        assertThat(svc.cluster(a, 5)).isSameAs(a); // no split: the route's cluster
    }
}
