package io.sluice.server.discovery;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.config.NacosOptions;
import io.sluice.core.discovery.DiscoveredHost;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * Nacos naming's instance list ({@code GET {context}/v1/ns/instance/list}, the open API every Nacos
 * server from 0.8 to 2.x answers) turned into hosts, and the Nacos service name SOFARPC's Nacos
 * registry uses for a service ({@code NacosRegistryHelper.buildServiceName}).
 *
 * <p>Per instance: {@code ip}, {@code port}; {@code enabled: false} = left out; {@code healthy: false}
 * ({@code valid} on servers before 1.0) = left out when {@code healthy_only}; {@code metadata} carries
 * SOFARPC's provider parameters ({@code weight}, {@code startTime}, {@code warmupTime},
 * {@code warmupWeight}, {@code disabled}, {@code protocol}, ...) and is read exactly like the
 * parameters of a ZooKeeper provider URL ({@link SofaProvider}). Weight =
 * {@code round(metadata weight (default 100) × Nacos instance weight (default 1.0))}: a SOFARPC
 * provider (Nacos weight left at 1.0) keeps its own weight, a plain Nacos instance of weight 2.5 gets 250.
 */
final class NacosInstances {

    private NacosInstances() {
    }

    /**
     * The Nacos service name for {@code config}: {@code service_name} if given, else SOFARPC's
     * {@code interface[:uniqueId]:DEFAULT} (bolt, tr) or {@code interface[:uniqueId]:protocol}.
     */
    static String serviceName(DiscoveryConfig config) {
        NacosOptions n = config.nacos();
        if (n != null && n.serviceName() != null) {
            return n.serviceName();
        }
        SofaService s = SofaService.parse(config.service());
        String p = config.protocol();
        return s.key() + ("bolt".equals(p) || "tr".equals(p) ? ":DEFAULT" : ":" + p);
    }

    /**
     * The hosts of an instance-list answer, one per address (the latest {@code startTime} wins if an
     * address is listed twice), sorted by address.
     *
     * @param bad told {@code (instance id, reason)} for each instance that does not map to a host
     * @throws IllegalArgumentException if the answer has no {@code hosts} array
     */
    static List<DiscoveredHost> hosts(JsonNode answer, boolean healthyOnly, BiConsumer<String, String> bad) {
        JsonNode hosts = answer == null ? null : answer.get("hosts");
        if (answer != null && hosts == null && answer.has("data")) {
            hosts = answer.get("data").get("hosts"); // the v2 API's envelope
        }
        if (hosts == null || !hosts.isArray()) {
            throw new IllegalArgumentException("the answer has no \"hosts\" array");
        }
        Map<String, DiscoveredHost> byAddress = new LinkedHashMap<>();
        for (JsonNode i : hosts) {
            String ip = text(i, "ip");
            int port = i.path("port").asInt(-1);
            String id = i.has("instanceId") ? text(i, "instanceId") : ip + "#" + port;
            if (!i.path("enabled").asBoolean(true)) {
                continue;
            }
            boolean healthy = i.has("healthy") ? i.path("healthy").asBoolean(true) : i.path("valid").asBoolean(true);
            if (healthyOnly && !healthy) {
                continue;
            }
            if (ip == null || ip.isBlank() || port < 1 || port > 65535) {
                bad.accept(id, "no usable ip and port (ip " + ip + ", port " + i.path("port") + ")");
                continue;
            }
            Map<String, String> meta = new HashMap<>();
            JsonNode m = i.get("metadata");
            if (m != null && m.isObject()) {
                for (Iterator<Map.Entry<String, JsonNode>> it = m.fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> e = it.next();
                    meta.put(e.getKey(), e.getValue().isValueNode() ? e.getValue().asText() : e.getValue().toString());
                }
            }
            String protocol = meta.getOrDefault("protocol", "bolt").toLowerCase(Locale.ROOT);
            SofaProvider p = new SofaProvider(protocol, ip, port, Map.copyOf(meta));
            double nacosWeight = nacosWeight(i.get("weight"));
            if (!(nacosWeight >= 0) || Double.isInfinite(nacosWeight)) {
                bad.accept(id, "weight " + i.path("weight") + " is not a number >= 0");
                continue;
            }
            int weight = (int) Math.min(DiscoveredHost.MAX_WEIGHT, Math.round(p.weight() * nacosWeight));
            DiscoveredHost h;
            try {
                h = new DiscoveredHost(ip, port, weight, p.startTime(), "nacos", p.warmupTime(), p.warmupWeight());
            } catch (IllegalArgumentException e) {
                bad.accept(id, e.getMessage());
                continue;
            }
            DiscoveredHost prev = byAddress.get(h.address());
            if (prev == null || h.startMillis() > prev.startMillis()) {
                byAddress.put(h.address(), h);
            }
        }
        List<DiscoveredHost> out = new ArrayList<>(byAddress.values());
        out.sort((a, b) -> a.address().compareTo(b.address()));
        return List.copyOf(out);
    }

    /** The Nacos instance weight (default 1.0); NaN when it is not a number. */
    private static double nacosWeight(JsonNode w) {
        if (w == null || w.isNull()) {
            return 1.0;
        }
        if (w.isNumber()) {
            return w.doubleValue();
        }
        try {
            return Double.parseDouble(w.asText().trim());
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    private static String text(JsonNode n, String key) {
        JsonNode v = n.get(key);
        return v == null || v.isNull() ? null : v.asText();
    }
}
