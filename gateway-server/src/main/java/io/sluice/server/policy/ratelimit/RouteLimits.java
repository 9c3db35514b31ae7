package io.sluice.server.policy.ratelimit;

import io.sluice.core.time.Ticker;

import java.net.SocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The rate-limit rules that apply to one route, in config order; attached to the route when its
 * table is compiled (a route no rule names has none, and costs its requests one null check). A
 * request must get a token from every rule that applies to it; the first rule that refuses decides
 * (tokens already taken from earlier rules stay taken, as in Envoy).
 */
public final class RouteLimits {

    /** {@link #decideHttp} / {@link #decideBolt} result: the request may pass. */
    public static final long ALLOWED = -1;

    private final Rule[] rules;
    private final Ticker ticker;

    RouteLimits(Rule[] rules, Ticker ticker) {
        this.rules = rules;
        this.ticker = ticker;
    }

    /** An HTTP request: {@link #ALLOWED}, or nanoseconds until a token (respond 429). */
    public long decideHttp(Function<String, String> headersByLowerName, SocketAddress remote) {
        return decide(headersByLowerName, remote, false, null, null);
    }

    /** A Bolt request: {@link #ALLOWED}, or nanoseconds until a token (respond SERVER_THREADPOOL_BUSY). */
    public long decideBolt(Function<String, String> headers, SocketAddress remote, String service, String method) {
        return decide(headers, remote, true, service, method);
    }

    private long decide(Function<String, String> headers, SocketAddress remote, boolean bolt, String service, String method) {
        long now = ticker.nanoTime();
        for (Rule r : rules) {
            if (!r.matches(bolt, service, method)) {
                continue;
            }
            Object key = r.key(headers, remote, bolt, service, method);
            if (key == null) {
                continue;
            }
            long d = r.acquire(key, now);
            if (d == Limiter.ALLOWED) {
                r.allowed.increment();
            } else if (d == Limiter.FAIL_OPEN) {
                r.failOpen.increment();
            } else {
                r.limited.increment();
                return d;
            }
        }
        return ALLOWED;
    }

    /** {@code Retry-After} seconds for a wait of {@code nanos}: rounded up, at least 1. */
    public static long retryAfterSeconds(long nanos) {
        return Math.max(1, (nanos + TimeUnit.SECONDS.toNanos(1) - 1) / TimeUnit.SECONDS.toNanos(1));
    }
}
