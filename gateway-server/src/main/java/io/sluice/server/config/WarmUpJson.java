package io.sluice.server.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.server.warmup.WarmUpConfig;

/**
 * Reads the native config's top-level {@code warm_up} section (docs/config.md#warm_up):
 * {@code {"enabled": true, "duration": "3s"}}. It is read at start only and is not part of
 * {@code GatewayConfig}; the loader takes it out of the document before reading the rest.
 */
final class WarmUpJson {

    static final String KEY = "warm_up";

    private WarmUpJson() {
    }

    /** The section's config, or the standalone default (on, 3 s) when the file has none. */
    static WarmUpConfig read(JsonNode root) {
        JsonNode n = root.get(KEY);
        WarmUpConfig d = WarmUpConfig.standaloneDefault();
        if (n == null || n.isNull()) {
            return d;
        }
        JsonObject o = JsonObject.of(n, "$." + KEY);
        boolean enabled = o.bool("enabled", true);
        var duration = o.duration("duration", d.duration());
        o.finish();
        return ConfigLoader.build(o.path(), () -> new WarmUpConfig(enabled, duration));
    }

    /** {@code root} without the section (a copy when it had one). */
    static JsonNode without(JsonNode root) {
        if (!root.has(KEY) || !root.isObject()) {
            return root;
        }
        ObjectNode copy = ((ObjectNode) root).deepCopy();
        copy.remove(KEY);
        return copy;
    }
}
