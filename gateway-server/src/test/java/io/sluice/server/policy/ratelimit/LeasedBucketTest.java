package io.sluice.server.policy.ratelimit;

import io.sluice.core.time.ManualScheduler;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.Deque;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A global bucket's local decisions, with the lease answers given by hand (the Redis side is
 * proven against a real redis-server in RateLimitRedisIT): spend leases locally, prefetch at half a
 * batch, never wait, fail open (or closed) while Redis is down or before the first lease.
 */
class LeasedBucketTest {

    private static final long MS = 1_000_000L;

    /** Records lease requests; the test answers them. */
    private static final class Leases implements LeaseClient {
        boolean up = true;
        final Deque<Callback> asked = new ArrayDeque<>();
        int wanted;

        @Override
        public boolean up() {
            return up;
        }

        @Override
        public void lease(String key, long maxTokens, long tokensPerFill, long fillMillis, int want, Callback callback) {
            if (!up) {
                callback.failed();
                return;
            }
            wanted = want;
            asked.add(callback);
        }
    }

    @Test
    void spendsLeasesLocallyAndPrefetchesAtHalfABatch() {
        ManualScheduler clock = new ManualScheduler();
        Leases redis = new Leases();
        LeasedBucket b = new LeasedBucket(redis, clock, "k", 100, 100, 1000, 10, false, 0);
        assertThat(b.acquire(0)).as("no lease yet: the failure mode decides, never waits").isEqualTo(Limiter.FAIL_OPEN);
        assertThat(redis.asked).hasSize(1);
        assertThat(b.acquire(0)).as("one lease in flight at a time").isEqualTo(Limiter.FAIL_OPEN);
        assertThat(redis.asked).hasSize(1);
        redis.asked.poll().granted(10, 500);
        for (int i = 0; i < 5; i++) {
            assertThat(b.acquire(0)).isEqualTo(Limiter.ALLOWED);
        }
        assertThat(redis.asked).as("remainder 5 = half a batch: prefetch").hasSize(1);
        for (int i = 0; i < 5; i++) {
            assertThat(b.acquire(0)).isEqualTo(Limiter.ALLOWED);
        }
        assertThat(b.acquire(0)).as("spent while the lease is in flight, the last lease whole: credit of 1 (1 % of 100)")
                .isEqualTo(Limiter.ALLOWED);
        assertThat(b.acquire(0)).as("credit used up: the known remainder decides")
                .isEqualTo(LeasedBucket.UNKNOWN_WAIT_NANOS);
        redis.asked.poll().granted(0, 300); // Redis: empty for 300 ms more
        clock.advanceNanos(100 * MS);
        assertThat(b.acquire(clock.nanoTime())).isEqualTo(300 * MS - 100 * MS + 0);
        assertThat(redis.asked).as("known empty: no round trip").isEmpty();
        clock.advanceNanos(200 * MS);
        assertThat(b.acquire(clock.nanoTime())).isEqualTo(LeasedBucket.UNKNOWN_WAIT_NANOS);
        assertThat(redis.asked).hasSize(1);
        assertThat(b.acquire(clock.nanoTime())).as("the last lease was not whole: no credit").isEqualTo(LeasedBucket.UNKNOWN_WAIT_NANOS);
        redis.asked.poll().granted(3, 1000);
        assertThat(b.remaining()).as("the debt of 1 paid from the lease").isEqualTo(2);
        assertThat(b.acquire(clock.nanoTime())).isEqualTo(Limiter.ALLOWED);
        // the lease's fill period ends: its 2 leftovers are dropped, not added to the next refill
        clock.advanceNanos(1000 * MS);
        assertThat(b.acquire(clock.nanoTime())).isEqualTo(LeasedBucket.UNKNOWN_WAIT_NANOS);
        assertThat(b.remaining()).isZero();
        assertThat(redis.asked).hasSize(1);
    }

    @Test
    void redisDownFailsOpenAfterTheLeasedTokensOrClosedWhenConfigured() {
        ManualScheduler clock = new ManualScheduler();
        Leases redis = new Leases();
        LeasedBucket open = new LeasedBucket(redis, clock, "k", 100, 100, 1000, 4, false, 0);
        LeasedBucket closed = new LeasedBucket(redis, clock, "k2", 100, 100, 1000, 4, true, 0);
        open.acquire(0);
        redis.asked.poll().granted(4, 1000);
        redis.up = false;
        assertThat(open.acquire(0)).as("leased tokens are still spent").isEqualTo(Limiter.ALLOWED);
        assertThat(open.acquire(0)).isEqualTo(Limiter.ALLOWED);
        assertThat(open.acquire(0)).isEqualTo(Limiter.ALLOWED);
        assertThat(open.acquire(0)).isEqualTo(Limiter.ALLOWED);
        redis.asked.clear();
        assertThat(open.acquire(0)).isEqualTo(Limiter.FAIL_OPEN);
        assertThat(closed.acquire(0)).isEqualTo(LeasedBucket.UNKNOWN_WAIT_NANOS);
    }

    @Test
    void aLargeRuleAdmitsUpToALeaseOnCreditWhileTheNextLeaseIsInFlightAndPaysItBack() {
        ManualScheduler clock = new ManualScheduler();
        Leases redis = new Leases();
        LeasedBucket b = new LeasedBucket(redis, clock, "k", 1_000_000, 1_000_000, 1000, 10, false, 0);
        b.acquire(0);
        redis.asked.poll().granted(10, 1000);
        for (int i = 0; i < 10; i++) {
            assertThat(b.acquire(0)).isEqualTo(Limiter.ALLOWED);
        }
        assertThat(redis.asked).as("prefetch in flight").hasSize(1);
        for (int i = 0; i < 10; i++) {
            assertThat(b.acquire(0)).as("on credit: min(lease 10, 1 % of 1 000 000)").isEqualTo(Limiter.ALLOWED);
        }
        assertThat(b.acquire(0)).as("credit is one lease at most").isEqualTo(LeasedBucket.UNKNOWN_WAIT_NANOS);
        assertThat(b.remaining()).isEqualTo(-10);
        redis.asked.poll().granted(10, 1000);
        assertThat(b.remaining()).as("the lease paid the debt").isZero();
        // the refill: unspent tokens are dropped, and the requests until the next lease arrives go on credit
        redis.asked.clear();
        b.acquire(0);
        redis.asked.poll().granted(10, 1000);
        clock.advanceNanos(1000 * MS);
        assertThat(b.acquire(clock.nanoTime())).as("leftovers dropped at the refill; on credit meanwhile").isEqualTo(Limiter.ALLOWED);
        assertThat(b.remaining()).isEqualTo(-1);

        LeasedBucket deny = new LeasedBucket(redis, clock, "d", 1_000_000, 1_000_000, 1000, 10, true, 0);
        redis.asked.clear();
        deny.acquire(clock.nanoTime());
        redis.asked.poll().granted(10, 1000);
        for (int i = 0; i < 10; i++) {
            deny.acquire(clock.nanoTime());
        }
        assertThat(deny.acquire(clock.nanoTime())).as("failure_mode_deny: no credit").isEqualTo(LeasedBucket.UNKNOWN_WAIT_NANOS);
    }
}
