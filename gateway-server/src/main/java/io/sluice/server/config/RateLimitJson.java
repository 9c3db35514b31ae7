package io.sluice.server.config;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.RateLimitConfig;
import io.sluice.core.config.RateLimitConfig.RedisConfig;
import io.sluice.core.config.RateLimitRule;
import io.sluice.core.config.RateLimitRule.Key;
import io.sluice.core.config.RateLimitRule.KeyKind;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/** Reads the native {@code rate_limit} section (see docs/rate-limits.md). */
final class RateLimitJson {

    private RateLimitJson() {
    }

    static RateLimitConfig read(JsonObject o) {
        if (o == null) {
            return RateLimitConfig.disabled();
        }
        List<RateLimitRule> rules = o.array("rules", (n, p) -> rule(JsonObject.of(n, p)));
        int maxKeys = o.integer("max_keys", RateLimitConfig.DEFAULT_MAX_KEYS);
        Duration idle = o.duration("key_idle_timeout", null);
        RedisConfig redis = redis(o.object("redis"));
        o.finish();
        return ConfigLoader.build(o.path(), () -> new RateLimitConfig(rules, maxKeys, idle, redis));
    }

    private static RateLimitRule rule(JsonObject o) {
        String name = o.requiredString("name");
        List<String> routes = o.strings("routes");
        String service = o.string("service", null);
        String method = o.string("method", null);
        Key key = key(o);
        int max = o.integer("max_tokens", -1);
        if (!o.has("max_tokens")) {
            throw new ConfigException(o.at("max_tokens"), null, "an integer in [1, " + RateLimitRule.MAX_TOKENS + "]");
        }
        int perFill = o.integer("tokens_per_fill", max);
        if (o.has("tokens_per_fill") && perFill == 0) {
            throw new ConfigException(o.at("tokens_per_fill"), 0, "an integer in [1, max_tokens]");
        }
        Duration fill = o.duration("fill_interval", null);
        boolean global = o.bool("global", false);
        o.finish();
        return ConfigLoader.build(o.path(), () -> new RateLimitRule(name, routes, service, method, key, max, perFill, fill, global));
    }

    /** {@code "key": "client_address"} or {@code "key": {"kind": "header", "header": "x-tenant"}}. */
    private static Key key(JsonObject rule) {
        JsonNode raw = rule.raw("key");
        if (raw == null) {
            return Key.NONE;
        }
        String at = rule.at("key");
        if (raw.isTextual()) {
            return new Key(kind(raw.asText(), at), null);
        }
        JsonObject o = JsonObject.of(raw, at);
        String kindName = o.requiredString("kind");
        KeyKind kind = kind(kindName, o.at("kind"));
        String header = o.string("header", null);
        o.finish();
        return ConfigLoader.build(at, () -> new Key(kind, header));
    }

    private static KeyKind kind(String s, String at) {
        KeyKind k = KeyKind.of(s);
        if (k == null) {
            throw new ConfigException(at, s, "one of " + Arrays.stream(KeyKind.values()).map(KeyKind::jsonName).toList()
                    + " (\"tls_identity\" is not supported yet)");
        }
        return k;
    }

    private static RedisConfig redis(JsonObject o) {
        if (o == null) {
            return null;
        }
        String address = o.requiredString("address");
        int colon = address.lastIndexOf(':');
        int port;
        try {
            port = colon < 1 ? -1 : Integer.parseInt(address.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 1 || port > 65535) {
            throw new ConfigException(o.at("address"), address, "host:port, e.g. \"127.0.0.1:6379\"");
        }
        String host = address.substring(0, colon);
        int p = port;
        Duration timeout = o.duration("timeout", null);
        int lease = o.integer("lease_size", 10);
        if (lease == 0) {
            throw new ConfigException(o.at("lease_size"), 0, "an integer in [1, 100000]");
        }
        boolean deny = o.bool("failure_mode_deny", false);
        Duration rmin = o.duration("reconnect_min", null);
        Duration rmax = o.duration("reconnect_max", null);
        String prefix = o.string("key_prefix", null);
        o.finish();
        return ConfigLoader.build(o.path(), () -> new RedisConfig(host, p, timeout, lease, deny, rmin, rmax, prefix));
    }
}
