package io.sluice.server.policy.ratelimit;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** The lock-free token bucket on an injected clock: exact counts, discrete refill, wait times, two threads. */
class TokenBucketTest {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    @Test
    void handsOutExactlyMaxTokensThenRefillsTokensPerFillPerInterval() {
        long t0 = 1_000_000_000L;
        TokenBucket b = new TokenBucket(10, 10, SECOND, t0);
        int allowed = 0;
        for (int i = 0; i < 100; i++) { // 100 requests within 100 ms
            if (b.acquire(t0 + i * 1_000_000L) == Limiter.ALLOWED) {
                allowed++;
            }
        }
        assertThat(allowed).isEqualTo(10);
        // the 11th waits until the end of the first fill period
        assertThat(b.acquire(t0 + 100_000_000L)).isEqualTo(900_000_000L);
        assertThat(b.acquire(t0 + SECOND - 1)).isEqualTo(1);
        // at 1 s: 10 more, then none
        for (int i = 0; i < 10; i++) {
            assertThat(b.acquire(t0 + SECOND)).isEqualTo(Limiter.ALLOWED);
        }
        assertThat(b.acquire(t0 + SECOND)).isEqualTo(SECOND);
    }

    @Test
    void partialFillsAddUpToTheCapacityAndNoMore() {
        long t0 = 0;
        TokenBucket b = new TokenBucket(10, 2, 100_000_000L, t0); // 2 tokens per 100 ms, capacity 10
        for (int i = 0; i < 10; i++) {
            assertThat(b.acquire(t0)).isEqualTo(Limiter.ALLOWED);
        }
        assertThat(b.available(t0 + 99_999_999L)).isZero();
        assertThat(b.available(t0 + 100_000_000L)).isEqualTo(2);
        assertThat(b.available(t0 + 300_000_000L)).isEqualTo(6);
        assertThat(b.available(t0 + 10 * SECOND)).isEqualTo(10); // capped, however long it idled
        // a 2x burst around a period boundary does not pass: capacity is the bound
        int n = 0;
        while (b.acquire(t0 + 10 * SECOND) == Limiter.ALLOWED) {
            n++;
        }
        assertThat(n).isEqualTo(10);
        assertThat(b.acquire(t0 + 10 * SECOND + 100_000_000L)).isEqualTo(Limiter.ALLOWED);
    }

    @Test
    void twoThreadsTogetherGetExactlyTheConfiguredTokensPlusAtMostOneRefill() throws Exception {
        long fill = 1_000_000L; // 1 ms of fake time
        TokenBucket b = new TokenBucket(100, 50, fill, 0);
        AtomicLong clock = new AtomicLong();
        AtomicLong granted = new AtomicLong();
        int perThread = 200_000;
        CyclicBarrier go = new CyclicBarrier(2);
        Runnable worker = () -> {
            try {
                go.await(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            long mine = 0;
            for (int i = 0; i < perThread; i++) {
                long now = clock.addAndGet(100); // each request moves fake time by 100 ns
                if (b.acquire(now) == Limiter.ALLOWED) {
                    mine++;
                }
            }
            granted.addAndGet(mine);
        };
        Thread t1 = new Thread(worker, "loop-1");
        Thread t2 = new Thread(worker, "loop-2");
        t1.start();
        t2.start();
        t1.join(30_000);
        t2.join(30_000);
        long periods = clock.get() / fill; // 400 000 requests × 100 ns = 40 ms = 40 fills
        long max = 100 + 50 * periods;
        assertThat(granted.get()).isBetween(max - 50, max);
    }

    @Test
    void frozenClockTwoThreadsExactlyCapacity() throws Exception {
        int capacity = 4_000_000; // large, so that both threads really contend for a while
        TokenBucket b = new TokenBucket(capacity, capacity, SECOND, 0);
        AtomicLong granted = new AtomicLong();
        CyclicBarrier go = new CyclicBarrier(2);
        Runnable worker = () -> {
            try {
                go.await(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            long mine = 0;
            for (int i = 0; i < 3_000_000; i++) {
                if (b.acquire(5) == Limiter.ALLOWED) {
                    mine++;
                }
            }
            granted.addAndGet(mine);
        };
        Thread t1 = new Thread(worker);
        Thread t2 = new Thread(worker);
        t1.start();
        t2.start();
        t1.join(30_000);
        t2.join(30_000);
        assertThat(granted.get()).isEqualTo(capacity);
    }

    @Test
    void idleOnlyWhenUnusedAndFull() {
        TokenBucket b = new TokenBucket(2, 1, SECOND, 0);
        assertThat(b.acquire(10 * 1_000_000L)).isEqualTo(Limiter.ALLOWED);
        assertThat(b.idle(20 * 1_000_000L, 15 * 1_000_000L)).as("not full").isFalse();
        assertThat(b.idle(2 * SECOND, 5 * 1_000_000L)).as("used after idleBefore").isFalse();
        assertThat(b.idle(2 * SECOND, SECOND)).isTrue();
    }

    @Test
    void retryAfterIsRoundedUpToWholeSeconds() {
        assertThat(RouteLimits.retryAfterSeconds(0)).isEqualTo(1);
        assertThat(RouteLimits.retryAfterSeconds(1)).isEqualTo(1);
        assertThat(RouteLimits.retryAfterSeconds(SECOND)).isEqualTo(1);
        assertThat(RouteLimits.retryAfterSeconds(SECOND + 1)).isEqualTo(2);
    }
}
