package io.sluice.server.config;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.DurationFormat;
import io.sluice.core.config.NacosOptions;

import java.time.Duration;
import java.util.List;

/**
 * The Nacos keys of a {@code discovery} block ({@code type: "nacos"}, docs/config.md#discovery):
 * {@code namespace}, {@code group}, {@code clusters}, {@code service_name}, {@code poll_interval},
 * {@code username}, {@code password}, {@code healthy_only}. They sit next to {@code address} and
 * {@code service}; on any other type they are an error naming the key.
 */
final class NacosJson {

    private static final String[] KEYS = {"namespace", "group", "clusters", "service_name", "poll_interval",
            "username", "password", "healthy_only"};

    private NacosJson() {
    }

    /** The options, {@link NacosOptions#defaults()} for a nacos block without them, null for other types. */
    static NacosOptions read(JsonObject o) {
        String type = o.string("type", "");
        boolean nacos = "nacos".equalsIgnoreCase(type.trim());
        if (!nacos) {
            for (String k : KEYS) {
                if (o.has(k)) {
                    throw new ConfigException(o.at(k), "password".equals(k) ? "(set)" : String.valueOf(o.raw(k)), "only with \"type\": \"nacos\"");
                }
            }
            return null;
        }
        String namespace = o.string("namespace", null);
        String group = o.string("group", null);
        List<String> clusters = o.has("clusters") ? o.strings("clusters") : null;
        String serviceName = o.string("service_name", null);
        Duration poll = o.duration("poll_interval", null);
        String user = o.string("username", null);
        String pass = o.string("password", null);
        boolean healthyOnly = o.bool("healthy_only", true);
        return ConfigLoader.build(o.path(), () -> new NacosOptions(namespace, group, clusters, serviceName, poll, user, pass,
                healthyOnly));
    }

    /** Renders the options for {@code GET /config}; the password is shown as {@code "***"}. */
    static void write(ObjectNode dn, NacosOptions n) {
        if (n == null) {
            return;
        }
        dn.put("namespace", n.namespace()).put("group", n.group());
        n.clusters().forEach(dn.putArray("clusters")::add);
        if (n.serviceName() != null) {
            dn.put("service_name", n.serviceName());
        }
        dn.put("poll_interval", DurationFormat.format(n.pollInterval())).put("healthy_only", n.healthyOnly());
        if (n.username() != null) {
            dn.put("username", n.username()).put("password", "***");
        }
    }
}
