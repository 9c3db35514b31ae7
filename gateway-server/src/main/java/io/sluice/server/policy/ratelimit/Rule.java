package io.sluice.server.policy.ratelimit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sluice.core.config.RateLimitConfig;
import io.sluice.core.config.RateLimitRule;
import io.sluice.core.config.RateLimitRule.KeyKind;
import io.sluice.core.time.Ticker;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * A compiled {@link RateLimitRule}: its buckets (one, or a bounded {@link KeyTable}) and its meters.
 * Built at config load; nothing is allocated per request except a new key's bucket.
 */
final class Rule {

    final RateLimitRule config;
    private final KeyKind kind;
    private final String header;
    private final String headerLower;
    /** The one bucket of an unkeyed rule (null when keyed). */
    private final Limiter single;
    private final KeyTable table;
    final Counter allowed;
    final Counter limited;
    final Counter failOpen;
    private final List<Meter> meters = new ArrayList<>();
    private final MeterRegistry registry;

    Rule(RateLimitRule config, RateLimitConfig all, MeterRegistry registry, Ticker ticker, LeaseClient redis) {
        this.config = config;
        this.registry = registry;
        this.kind = config.key().kind();
        this.header = config.key().header();
        this.headerLower = header == null ? null : header.toLowerCase(Locale.ROOT);
        long fillNanos = config.fillInterval().toNanos();
        KeyTable.Factory factory;
        if (config.global()) {
            RateLimitConfig.RedisConfig rc = all.redis();
            long fillMillis = Math.max(1, config.fillInterval().toMillis());
            String base = rc.keyPrefix() + "{" + config.name();
            factory = (key, now) -> new LeasedBucket(redis, ticker, key == this ? base + "}" : base + ":" + keyText(key) + "}",
                    config.maxTokens(), config.tokensPerFill(), fillMillis, rc.leaseSize(), rc.failureModeDeny(), now);
        } else {
            factory = (key, now) -> new TokenBucket(config.maxTokens(), config.tokensPerFill(), fillNanos, now);
        }
        if (kind == KeyKind.NONE) {
            this.single = factory.create(this, ticker.nanoTime());
            this.table = null;
        } else {
            this.single = null;
            this.table = new KeyTable(all.maxKeys(), factory);
        }
        String n = config.name();
        allowed = add(Counter.builder("sluice.ratelimit.requests").tags("rule", n, "result", "allowed")
                .description("Rate-limit decisions per rule: allowed, limited (429 / SERVER_THREADPOOL_BUSY), failopen"
                        + " (global rule allowed while Redis was unavailable)").register(registry));
        limited = add(Counter.builder("sluice.ratelimit.requests").tags("rule", n, "result", "limited").register(registry));
        failOpen = add(Counter.builder("sluice.ratelimit.requests").tags("rule", n, "result", "failopen").register(registry));
        if (table != null) {
            add(Gauge.builder("sluice.ratelimit.keys", table, KeyTable::size).tag("rule", n)
                    .description("Keyed buckets a rule holds (at most rate_limit.max_keys)").register(registry));
            add(FunctionCounter.builder("sluice.ratelimit.key.evictions", table, KeyTable::evictions).tag("rule", n)
                    .description("Keyed buckets dropped because the rule's table was full (least recently used first)")
                    .register(registry));
        }
    }

    private static String keyText(Object key) {
        return key instanceof java.net.InetAddress a ? a.getHostAddress() : String.valueOf(key);
    }

    private <M extends Meter> M add(M m) {
        meters.add(m);
        return m;
    }

    /** Whether the rule looks at Bolt requests of {@code service}/{@code method} (HTTP: both null). */
    boolean matches(boolean bolt, String service, String method) {
        if (config.service() != null && (!bolt || !config.service().equals(service))) {
            return false;
        }
        return config.method() == null || bolt && config.method().equals(method);
    }

    /**
     * The bucket key of a request, or null when the rule does not apply to it (its header is absent,
     * or a Bolt key on an HTTP request).
     *
     * @param headers HTTP: by lower-case name; Bolt: by exact key
     */
    Object key(Function<String, String> headers, SocketAddress remote, boolean bolt, String service, String method) {
        switch (kind) {
            case NONE:
                return this;
            case CLIENT_ADDRESS:
                return remote instanceof InetSocketAddress a && a.getAddress() != null ? a.getAddress() : "unknown";
            case HEADER:
                return headers.apply(bolt ? header : headerLower);
            case SERVICE:
                return bolt && service != null ? service : null;
            case METHOD:
                return bolt && service != null ? service + "#" + method : null;
            default:
                return null;
        }
    }

    /** Takes a token for {@code key} (from {@link #key}); see {@link Limiter#acquire}. */
    long acquire(Object key, long now) {
        Limiter b = single != null ? single : table.bucket(key, now);
        return b.acquire(now);
    }

    /** Drops idle full keyed buckets. */
    void sweep(long now, long idleNanos) {
        if (table != null) {
            table.sweep(now, now - idleNanos);
        }
    }

    /** Same bucket semantics (so a reload may keep this rule's state). */
    boolean sameBuckets(RateLimitRule other) {
        return config.equals(other);
    }

    void removeMeters() {
        meters.forEach(registry::remove);
    }
}
