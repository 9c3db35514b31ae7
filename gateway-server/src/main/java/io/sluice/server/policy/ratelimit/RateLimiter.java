package io.sluice.server.policy.ratelimit;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sluice.core.config.RateLimitConfig;
import io.sluice.core.config.RateLimitRule;
import io.sluice.core.time.Cancellable;
import io.sluice.core.time.Scheduler;
import io.sluice.core.time.Ticker;
import io.sluice.server.route.Route;
import io.sluice.server.route.RouteTable;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * The gateway's rate limiting: the compiled rules of {@code rate_limit} and, for global rules, the
 * Redis link. {@link #attach} gives every route of a freshly compiled route table the rules that
 * name it; a reload {@linkplain #update updates} the rules first, keeping the buckets of rules that
 * did not change. Without rules nothing is attached and requests pay one null check.
 */
public final class RateLimiter implements AutoCloseable {

    private final MeterRegistry registry;
    private final Ticker ticker;
    private final Scheduler scheduler;
    /** Creates the Redis link for a config (started by the caller's factory); null when Redis is not available. */
    private final Function<RateLimitConfig.RedisConfig, RedisLink> redisFactory;
    private volatile Map<String, Rule> rules = Map.of();
    private volatile RateLimitConfig config = RateLimitConfig.disabled();
    private RedisLink redis;
    private final List<Meter> redisMeters = new ArrayList<>();
    private Cancellable sweep = Cancellable.NOOP;

    /**
     * @param scheduler    runs the idle-bucket sweep
     * @param redisFactory makes (and starts) the Redis link of global rules
     */
    RateLimiter(MeterRegistry registry, Scheduler scheduler, Function<RateLimitConfig.RedisConfig, RedisLink> redisFactory) {
        this.registry = registry;
        this.scheduler = scheduler;
        this.ticker = scheduler.ticker();
        this.redisFactory = redisFactory;
    }

    /**
     * The production limiter: sweeps and the Redis link run on one of {@code workers}' event loops,
     * Redis connections use the gateway's transport.
     */
    public static RateLimiter create(MeterRegistry registry, io.netty.channel.EventLoopGroup workers,
                                     io.sluice.server.transport.Transport transport, Ticker ticker) {
        io.netty.channel.EventLoop loop = workers.next();
        Scheduler s = new io.sluice.server.transport.EventLoopScheduler(loop, ticker);
        return new RateLimiter(registry, s, rc -> {
            try {
                Class.forName("io.netty.handler.codec.redis.RedisDecoder", false, RateLimiter.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException("rate_limit.redis needs io.netty:netty-codec-redis on the class path"
                        + " (the standalone jar has it; embedders add it, see docs/rate-limits.md)");
            }
            RedisLink link = new RedisLink(rc, loop, transport.upstreamBootstrap(loop), s);
            link.start();
            return link;
        });
    }

    /** A limiter of local rules only (benchmarks, tests): a config with global rules fails to apply. */
    public static RateLimiter localOnly(MeterRegistry registry, Scheduler scheduler) {
        return new RateLimiter(registry, scheduler, rc -> {
            throw new IllegalStateException("this rate limiter has no Redis");
        });
    }

    /** Applies {@code next}: unchanged rules keep their buckets; the Redis link is replaced when its config changed. */
    public synchronized void update(RateLimitConfig next) {
        RateLimitConfig prev = config;
        if (!Objects.equals(prev.redis(), next.redis()) || next.redis() != null && redis == null && hasGlobal(next)) {
            closeRedis();
            if (next.redis() != null && hasGlobal(next)) {
                redis = redisFactory.apply(next.redis());
                RedisLink link = redis;
                redisMeters.add(Gauge.builder("sluice.ratelimit.redis.up", link, l -> l.up() ? 1 : 0)
                        .description("1 while the rate-limit Redis answers, 0 while global rules fail open (or closed)")
                        .register(registry));
                redisMeters.add(FunctionCounter.builder("sluice.ratelimit.redis.failures", link, RedisLink::failures)
                        .description("Token leases that got no answer from Redis (timeout, error, connection lost)")
                        .register(registry));
                redisMeters.add(FunctionCounter.builder("sluice.ratelimit.redis.leases", link, RedisLink::leases)
                        .description("Token leases answered by Redis (one round trip each)").register(registry));
            }
        }
        Map<String, Rule> old = rules;
        Map<String, Rule> built = new HashMap<>();
        boolean redisChanged = !Objects.equals(prev.redis(), next.redis());
        for (RateLimitRule rc : next.rules()) {
            Rule keep = old.get(rc.name());
            if (keep != null && keep.sameBuckets(rc) && !(rc.global() && redisChanged) && prev.maxKeys() == next.maxKeys()) {
                built.put(rc.name(), keep);
            } else {
                if (keep != null) {
                    keep.removeMeters();
                }
                built.put(rc.name(), new Rule(rc, next, registry, ticker, redis));
            }
        }
        for (Map.Entry<String, Rule> e : old.entrySet()) {
            if (built.get(e.getKey()) != e.getValue() && !built.containsKey(e.getKey())) {
                e.getValue().removeMeters();
            }
        }
        rules = built;
        config = next;
        sweep.cancel();
        sweep = Cancellable.NOOP;
        if (!built.isEmpty()) {
            long idle = next.keyIdleTimeout().toNanos();
            sweep = scheduler.scheduleWithFixedDelay(() -> {
                long now = ticker.nanoTime();
                for (Rule r : rules.values()) {
                    r.sweep(now, idle);
                }
            }, idle, idle);
        }
    }

    private static boolean hasGlobal(RateLimitConfig c) {
        return c.rules().stream().anyMatch(RateLimitRule::global);
    }

    /** Gives every route of {@code table} the rules that apply to it (before the table is published). */
    public void attach(RouteTable table) {
        Map<String, Rule> current = rules;
        RateLimitConfig c = config;
        for (Route route : table.routes()) {
            List<Rule> applicable = new ArrayList<>();
            for (RateLimitRule rc : c.rules()) {
                if (rc.routes().isEmpty() || rc.routes().contains(route.name())) {
                    applicable.add(current.get(rc.name()));
                }
            }
            route.rateLimits(applicable.isEmpty() ? null : new RouteLimits(applicable.toArray(new Rule[0]), ticker));
        }
    }

    /** Whether the Redis link of global rules is up (false without one). */
    public boolean redisUp() {
        RedisLink r = redis;
        return r != null && r.up();
    }

    private void closeRedis() {
        if (redis != null) {
            redis.close();
            redis = null;
        }
        redisMeters.forEach(registry::remove);
        redisMeters.clear();
    }

    @Override
    public synchronized void close() {
        sweep.cancel();
        closeRedis();
        rules.values().forEach(Rule::removeMeters);
        rules = Map.of();
    }
}
