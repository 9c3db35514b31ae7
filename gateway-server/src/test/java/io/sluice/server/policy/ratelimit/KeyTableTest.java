package io.sluice.server.policy.ratelimit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The bounded key table: size cap with counted LRU-sampled evictions, idle sweep that loses no state. */
class KeyTableTest {

    private static final long MS = 1_000_000L;

    private static KeyTable table(int max) {
        return new KeyTable(max, (key, now) -> new TokenBucket(3, 3, 1000 * MS, now));
    }

    @Test
    void keepsAtMostMaxKeysEvictingTheLeastRecentlyUsed() {
        KeyTable t = table(3);
        t.bucket("a", 0).acquire(0);
        t.bucket("b", 10 * MS).acquire(10 * MS);
        t.bucket("c", 20 * MS).acquire(20 * MS);
        t.bucket("a", 30 * MS).acquire(30 * MS); // a is recent again; b is now the oldest
        assertThat(t.size()).isEqualTo(3);
        t.bucket("d", 40 * MS);
        assertThat(t.size()).isEqualTo(3);
        assertThat(t.evictions()).isEqualTo(1);
        // a kept its state (1 of 3 left in this period); b was dropped (c and d stay)
        assertThat(t.bucket("a", 41 * MS).acquire(41 * MS)).isEqualTo(Limiter.ALLOWED);
        assertThat(t.bucket("a", 41 * MS).acquire(41 * MS)).isNotEqualTo(Limiter.ALLOWED);
        assertThat(t.bucket("c", 42 * MS).acquire(42 * MS)).isEqualTo(Limiter.ALLOWED);
        assertThat(t.evictions()).as("a and c were still there").isEqualTo(1);
    }

    @Test
    void sweepDropsOnlyIdleFullBuckets() {
        KeyTable t = table(100);
        t.bucket("used", 0).acquire(0);
        t.bucket("drained", 0).acquire(0);
        t.bucket("drained", 0).acquire(0);
        t.bucket("drained", 0).acquire(0);
        assertThat(t.sweep(500 * MS, 400 * MS)).as("drained is not full yet, used neither").isZero();
        assertThat(t.sweep(1000 * MS, 900 * MS)).as("both refilled at 1 s and unused since 0").isEqualTo(2);
        assertThat(t.size()).isZero();
        assertThat(t.evictions()).isZero();
    }
}
