package io.sluice.server.discovery;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.config.NacosOptions;
import io.sluice.core.discovery.DiscoveredHost;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Nacos instance lists as Nacos 1.x/2.x servers write them ({@code healthy}, {@code ephemeral}, the v2
 * envelope) mapped to hosts; the 0.8 shape is covered against a real server by NacosDiscoveryIT.
 */
class NacosInstancesTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static List<DiscoveredHost> hosts(String json, boolean healthyOnly, List<String> bad) throws Exception {
        return NacosInstances.hosts(JSON.readTree(json), healthyOnly, (id, why) -> bad.add(id + ": " + why));
    }

    @Test
    void instancesMapToHostsWithSofaRpcMetadata() throws Exception {
        String answer = """
                {"name": "DEFAULT_GROUP@@com.example.Echo:DEFAULT", "groupName": "DEFAULT_GROUP", "clusters": "default-cluster",
                 "cacheMillis": 10000, "lastRefTime": 1795568703668, "checksum": "x", "allIPs": false,
                 "reachProtectionThreshold": false, "valid": true,
                 "hosts": [
                  {"instanceId": "a", "ip": "10.0.0.2", "port": 12200, "weight": 1.0, "healthy": true, "enabled": true,
                   "ephemeral": true, "clusterName": "default-cluster", "serviceName": "x",
                   "metadata": {"protocol": "bolt", "weight": "200", "startTime": "1795568000000", "warmupTime": "60000",
                                "warmupWeight": "10", "uniqueId": ""}},
                  {"instanceId": "b", "ip": "10.0.0.1", "port": 12200, "weight": 2.5, "healthy": true, "enabled": true, "metadata": {}},
                  {"instanceId": "off", "ip": "10.0.0.3", "port": 12200, "weight": 1.0, "healthy": true, "enabled": false, "metadata": {}},
                  {"instanceId": "sick", "ip": "10.0.0.4", "port": 12200, "weight": 1.0, "healthy": false, "enabled": true, "metadata": {}},
                  {"instanceId": "disabled", "ip": "10.0.0.5", "port": 12200, "weight": 1.0, "healthy": true,
                   "metadata": {"disabled": "true"}},
                  {"instanceId": "noport", "ip": "10.0.0.6", "weight": 1.0, "healthy": true},
                  {"instanceId": "old", "ip": "10.0.0.2", "port": 12200, "weight": 1.0, "healthy": true,
                   "metadata": {"weight": "100", "startTime": "1795567000000"}}
                 ]}""";
        List<String> bad = new ArrayList<>();
        List<DiscoveredHost> h = hosts(answer, true, bad);
        assertThat(h).containsExactly(
                new DiscoveredHost("10.0.0.1", 12200, 250, 0, "nacos", 0, -1),
                new DiscoveredHost("10.0.0.2", 12200, 200, 1795568000000L, "nacos", 60_000, 10),
                new DiscoveredHost("10.0.0.5", 12200, 0, 0, "nacos", 0, -1));
        assertThat(bad).singleElement().asString().startsWith("noport: no usable ip and port");

        // healthy_only false: the unhealthy instance serves too; enabled false never does
        assertThat(hosts(answer, false, new ArrayList<>())).extracting(DiscoveredHost::host)
                .containsExactly("10.0.0.1", "10.0.0.2", "10.0.0.4", "10.0.0.5");
    }

    @Test
    void theV2EnvelopeAndAnswersThatAreNotLists() throws Exception {
        assertThat(hosts("""
                {"code": 0, "message": "success", "data": {"hosts": [{"ip": "10.0.0.9", "port": 1, "weight": 1.0}]}}""",
                true, new ArrayList<>())).extracting(DiscoveredHost::address).containsExactly("10.0.0.9:1");
        assertThatThrownBy(() -> hosts("{\"error\": \"x\"}", true, new ArrayList<>()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("hosts");
        List<String> bad = new ArrayList<>();
        assertThat(hosts("{\"hosts\": [{\"ip\": \"10.0.0.1\", \"port\": 1, \"weight\": \"heavy\"}]}", true, bad)).isEmpty();
        assertThat(bad).singleElement().asString().contains("weight");
    }

    @Test
    void serviceNamesAreSofaRpcs() {
        NacosOptions o = NacosOptions.defaults();
        assertThat(NacosInstances.serviceName(DiscoveryConfig.nacos("n:8848", "com.example.Echo:1.0", o)))
                .isEqualTo("com.example.Echo:DEFAULT");
        assertThat(NacosInstances.serviceName(DiscoveryConfig.nacos("n:8848", "com.example.Echo:1.0:u1", o)))
                .isEqualTo("com.example.Echo:u1:DEFAULT");
        assertThat(NacosInstances.serviceName(new DiscoveryConfig("nacos", "n:8848", "com.example.Echo:1.0", "h2c", null, null,
                null, false, null, null, null, null, 0, null, null, o))).isEqualTo("com.example.Echo:h2c");
        assertThat(NacosInstances.serviceName(DiscoveryConfig.nacos("n:8848", "ignored", o.withServiceName("orders"))))
                .isEqualTo("orders");
    }
}
