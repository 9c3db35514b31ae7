package io.sluice.core.config;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * One rate-limit rule: a token bucket ({@code max_tokens} capacity and initial fill, refilled by
 * {@code tokens_per_fill} every {@code fill_interval}, one token per request) applied to the
 * requests of the routes it names, optionally narrowed to one Bolt service and method, with one
 * bucket per value of its {@link Key}.
 *
 * @param name          the rule's name (metrics tag {@code rule}, Redis key part); unique
 * @param routes        route names the rule applies to; empty = every route of every listener
 * @param service       Bolt only: the request's service must equal this (null = any; HTTP requests never match)
 * @param method        Bolt only: the request's method must equal this (null = any; HTTP requests never match)
 * @param key           what separates buckets (default {@link Key#NONE}: one bucket for the rule)
 * @param maxTokens     bucket capacity and initial fill, in [1, 16777215]
 * @param tokensPerFill tokens added every {@code fillInterval} (default = maxTokens), in [1, maxTokens]
 * @param fillInterval  refill period, at least 1 ms
 * @param global        share the budget across gateway instances through the {@link RateLimitConfig#redis()} server
 */
public record RateLimitRule(String name, List<String> routes, String service, String method, Key key,
                            long maxTokens, long tokensPerFill, Duration fillInterval, boolean global) {

    /** Largest {@code max_tokens}: the local bucket packs its count into 24 bits. */
    public static final long MAX_TOKENS = (1L << 24) - 1;

    public RateLimitRule {
        Checks.notBlank("name", name);
        routes = Checks.list(routes);
        for (int i = 0; i < routes.size(); i++) {
            Checks.notBlank("routes[" + i + "]", routes.get(i));
        }
        key = key == null ? Key.NONE : key;
        if (maxTokens < 1 || maxTokens > MAX_TOKENS) {
            throw new ConfigException("max_tokens", maxTokens, "an integer in [1, " + MAX_TOKENS + "]");
        }
        if (tokensPerFill == 0) {
            tokensPerFill = maxTokens;
        }
        if (tokensPerFill < 1 || tokensPerFill > maxTokens) {
            throw new ConfigException("tokens_per_fill", tokensPerFill, "an integer in [1, max_tokens=" + maxTokens + "]");
        }
        Checks.notNull("fill_interval", fillInterval);
        if (fillInterval.compareTo(Duration.ofMillis(1)) < 0) {
            throw new ConfigException("fill_interval", DurationFormat.format(fillInterval), "a duration >= 1ms such as \"1s\"");
        }
    }

    /** A rule of {@code maxTokens} requests per {@code fillInterval} on the given routes, one bucket. */
    public static RateLimitRule perRoute(String name, long maxTokens, Duration fillInterval, String... routes) {
        return new RateLimitRule(name, List.of(routes), null, null, Key.NONE, maxTokens, maxTokens, fillInterval, false);
    }

    public RateLimitRule withKey(Key k) {
        return new RateLimitRule(name, routes, service, method, k, maxTokens, tokensPerFill, fillInterval, global);
    }

    public RateLimitRule withGlobal(boolean g) {
        return new RateLimitRule(name, routes, service, method, key, maxTokens, tokensPerFill, fillInterval, g);
    }

    public RateLimitRule withBolt(String svc, String m) {
        return new RateLimitRule(name, routes, svc, m, key, maxTokens, tokensPerFill, fillInterval, global);
    }

    /** What a bucket is chosen by. */
    public enum KeyKind {
        /** One bucket for the whole rule. */
        NONE,
        /** One bucket per client IP address. */
        CLIENT_ADDRESS,
        /** One bucket per value of a request header (HTTP header, or Bolt header-map entry); absent = no limit. */
        HEADER,
        /** Bolt: one bucket per service. */
        SERVICE,
        /** Bolt: one bucket per service and method. */
        METHOD;

        public String jsonName() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The kind named {@code s} in a config file, or null. */
        public static KeyKind of(String s) {
            for (KeyKind k : values()) {
                if (k.jsonName().equals(s)) {
                    return k;
                }
            }
            return null;
        }
    }

    /**
     * A bucket key: its kind, and for {@link KeyKind#HEADER} the header name (HTTP: matched
     * case-insensitively; Bolt: the exact header-map key).
     */
    public record Key(KeyKind kind, String header) {

        public static final Key NONE = new Key(KeyKind.NONE, null);
        public static final Key CLIENT_ADDRESS = new Key(KeyKind.CLIENT_ADDRESS, null);

        public Key {
            Checks.notNull("kind", kind);
            if (kind == KeyKind.HEADER) {
                Checks.notBlank("header", header);
            } else if (header != null) {
                throw new ConfigException("header", header, "no header name with key kind \"" + kind.jsonName() + "\"");
            }
        }

        public static Key header(String name) {
            return new Key(KeyKind.HEADER, name);
        }
    }
}
