package io.sluice.core.config;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Rate limiting (off by default: no rules). Local rules are token buckets in this process; rules
 * marked {@code global} share one budget per key across every gateway that talks to the same
 * {@link #redis()} server.
 *
 * @param rules          the rules, every matching one applies (a request must get a token from each)
 * @param maxKeys        per rule, at most this many keyed buckets are kept (the least recently used go first), >= 1
 * @param keyIdleTimeout a keyed bucket that is full and was not used for this long is dropped, > 0
 * @param redis          the Redis server of global rules (null = none; then no rule may be global)
 */
public record RateLimitConfig(List<RateLimitRule> rules, int maxKeys, Duration keyIdleTimeout, RedisConfig redis) {

    public static final int DEFAULT_MAX_KEYS = 10_000;
    public static final Duration DEFAULT_KEY_IDLE_TIMEOUT = Duration.ofSeconds(60);
    private static final RateLimitConfig DISABLED = new RateLimitConfig(List.of(), DEFAULT_MAX_KEYS, DEFAULT_KEY_IDLE_TIMEOUT, null);

    public RateLimitConfig {
        rules = Checks.list(rules);
        keyIdleTimeout = keyIdleTimeout == null ? DEFAULT_KEY_IDLE_TIMEOUT : Checks.positive("key_idle_timeout", keyIdleTimeout);
        if (maxKeys < 1) {
            throw new ConfigException("max_keys", maxKeys, "an integer >= 1");
        }
        Set<String> names = new HashSet<>();
        for (int i = 0; i < rules.size(); i++) {
            RateLimitRule r = rules.get(i);
            if (!names.add(r.name())) {
                throw new ConfigException("rules[" + i + "].name", r.name(), "a rule name not used before");
            }
            if (r.global() && redis == null) {
                throw new ConfigException("rules[" + i + "].global", true, "false, or a \"redis\" section for global rules");
            }
        }
    }

    public static RateLimitConfig disabled() {
        return DISABLED;
    }

    public boolean enabled() {
        return !rules.isEmpty();
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.rules = rules;
        b.maxKeys = maxKeys;
        b.keyIdleTimeout = keyIdleTimeout;
        b.redis = redis;
        return b;
    }

    /** Builds a {@link RateLimitConfig}; defaults: no rules, 10 000 keys per rule, 60 s idle timeout, no Redis. */
    public static final class Builder {
        private List<RateLimitRule> rules = List.of();
        private int maxKeys = DEFAULT_MAX_KEYS;
        private Duration keyIdleTimeout = DEFAULT_KEY_IDLE_TIMEOUT;
        private RedisConfig redis;

        private Builder() {
        }

        public Builder rules(List<RateLimitRule> r) {
            this.rules = r;
            return this;
        }

        public Builder rules(RateLimitRule... r) {
            this.rules = List.of(r);
            return this;
        }

        public Builder maxKeys(int n) {
            this.maxKeys = n;
            return this;
        }

        public Builder keyIdleTimeout(Duration d) {
            this.keyIdleTimeout = d;
            return this;
        }

        public Builder redis(RedisConfig r) {
            this.redis = r;
            return this;
        }

        public RateLimitConfig build() {
            return new RateLimitConfig(rules, maxKeys, keyIdleTimeout, redis);
        }
    }

    /**
     * The Redis server that global rules lease tokens from.
     *
     * @param host             host name or address
     * @param port             TCP port
     * @param timeout          a lease request not answered within this marks Redis down (default 50 ms)
     * @param leaseSize        tokens taken per round trip (default 10; 1 = one round trip per request)
     * @param failureModeDeny  when Redis is down: false (default) = allow requests (fail open), true = reject them
     * @param reconnectMin     first reconnect delay after a failure (default 100 ms), doubled per failed attempt
     * @param reconnectMax     largest reconnect delay (default 5 s)
     * @param keyPrefix        prefix of the Redis keys (default {@code sluice:rl:})
     */
    public record RedisConfig(String host, int port, Duration timeout, int leaseSize, boolean failureModeDeny,
                              Duration reconnectMin, Duration reconnectMax, String keyPrefix) {

        public RedisConfig {
            Checks.notBlank("address", host);
            if (port < 1 || port > 65535) {
                throw new ConfigException("address", host + ":" + port, "host:port with a port in [1, 65535]");
            }
            timeout = timeout == null ? Duration.ofMillis(50) : Checks.positive("timeout", timeout);
            if (leaseSize == 0) {
                leaseSize = 10;
            }
            if (leaseSize < 1 || leaseSize > 100_000) {
                throw new ConfigException("lease_size", leaseSize, "an integer in [1, 100000]");
            }
            reconnectMin = reconnectMin == null ? Duration.ofMillis(100) : Checks.positive("reconnect_min", reconnectMin);
            reconnectMax = reconnectMax == null ? Duration.ofSeconds(5) : Checks.positive("reconnect_max", reconnectMax);
            if (reconnectMax.compareTo(reconnectMin) < 0) {
                throw new ConfigException("reconnect_max", DurationFormat.format(reconnectMax), "a duration >= reconnect_min");
            }
            keyPrefix = keyPrefix == null ? "sluice:rl:" : keyPrefix;
        }

        /** Redis at {@code host:port} with the defaults. */
        public static RedisConfig of(String host, int port) {
            return new RedisConfig(host, port, null, 0, false, null, null, null);
        }

        public RedisConfig withLeaseSize(int n) {
            return new RedisConfig(host, port, timeout, n, failureModeDeny, reconnectMin, reconnectMax, keyPrefix);
        }

        public RedisConfig withFailureModeDeny(boolean deny) {
            return new RedisConfig(host, port, timeout, leaseSize, deny, reconnectMin, reconnectMax, keyPrefix);
        }

        public RedisConfig withTimeout(Duration t) {
            return new RedisConfig(host, port, t, leaseSize, failureModeDeny, reconnectMin, reconnectMax, keyPrefix);
        }

        public RedisConfig withKeyPrefix(String p) {
            return new RedisConfig(host, port, timeout, leaseSize, failureModeDeny, reconnectMin, reconnectMax, p);
        }

        public RedisConfig withReconnect(Duration min, Duration max) {
            return new RedisConfig(host, port, timeout, leaseSize, failureModeDeny, min, max, keyPrefix);
        }
    }
}
