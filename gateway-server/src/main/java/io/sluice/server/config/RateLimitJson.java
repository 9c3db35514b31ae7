package io.sluice.server.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.core.config.DurationFormat;
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

    /** Adds {@code rate_limit} to a rendered config (as {@link #read} reads it back), unless it is the default. */
    static void render(ObjectNode root, RateLimitConfig c) {
        if (c.equals(RateLimitConfig.disabled())) {
            return;
        }
        ObjectNode o = root.putObject("rate_limit");
        o.put("max_keys", c.maxKeys()).put("key_idle_timeout", DurationFormat.format(c.keyIdleTimeout()));
        RedisConfig r = c.redis();
        if (r != null) {
            o.putObject("redis").put("address", r.host() + ":" + r.port()).put("timeout", DurationFormat.format(r.timeout()))
                    .put("lease_size", r.leaseSize()).put("failure_mode_deny", r.failureModeDeny())
                    .put("reconnect_min", DurationFormat.format(r.reconnectMin()))
                    .put("reconnect_max", DurationFormat.format(r.reconnectMax())).put("key_prefix", r.keyPrefix());
        }
        ArrayNode rules = o.putArray("rules");
        for (RateLimitRule rule : c.rules()) {
            ObjectNode n = rules.addObject().put("name", rule.name());
            ArrayNode routes = n.putArray("routes");
            rule.routes().forEach(routes::add);
            if (rule.service() != null) {
                n.put("service", rule.service());
            }
            if (rule.method() != null) {
                n.put("method", rule.method());
            }
            if (rule.key().kind() == KeyKind.HEADER) {
                n.putObject("key").put("kind", "header").put("header", rule.key().header());
            } else {
                n.put("key", rule.key().kind().jsonName());
            }
            n.put("max_tokens", rule.maxTokens()).put("tokens_per_fill", rule.tokensPerFill())
                    .put("fill_interval", DurationFormat.format(rule.fillInterval())).put("global", rule.global());
        }
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
