package io.sluice.lb;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WeightedScheduleTest {

    @Test
    void ninetyTenIsExactOverEveryWindowOfTen() {
        WeightedSchedule s = WeightedSchedule.of(new int[] {90, 10});
        assertThat(s.cycleLength()).isEqualTo(10);
        int[] sides = new int[10_000];
        for (int i = 0; i < sides.length; i++) {
            sides[i] = s.next();
        }
        // every window of 10 consecutive picks (any phase) holds exactly one pick of the 10 % side
        for (int start = 0; start + 10 <= sides.length; start++) {
            int ones = 0;
            for (int k = start; k < start + 10; k++) {
                ones += sides[k];
            }
            assertThat(ones).as("window at %d", start).isEqualTo(1);
        }
    }

    @Test
    void splitsAreExactAndSmoothForUnevenWeights() {
        int[] w = {99, 1};
        WeightedSchedule s = WeightedSchedule.of(w);
        int[] count = new int[2];
        for (int i = 0; i < 10_000; i++) {
            count[s.next()]++;
        }
        assertThat(count).containsExactly(9900, 100);

        WeightedSchedule three = WeightedSchedule.of(new int[] {50, 30, 20});
        int[] c3 = new int[3];
        int longestRun = 0;
        int run = 0;
        int prev = -1;
        for (int i = 0; i < 1000; i++) {
            int side = three.next();
            c3[side]++;
            run = side == prev ? run + 1 : 1;
            prev = side;
            longestRun = Math.max(longestRun, run);
        }
        assertThat(c3).containsExactly(500, 300, 200);
        assertThat(longestRun).isLessThanOrEqualTo(2); // smooth: no long streaks of one side
    }

    @Test
    void aZeroWeightSideGetsNothing() {
        WeightedSchedule s = WeightedSchedule.of(new int[] {0, 100});
        for (int i = 0; i < 100; i++) {
            assertThat(s.next()).isEqualTo(1);
            assertThat(s.forHash(i * 7919L + 1)).isEqualTo(1);
        }
    }

    @Test
    void exactAcrossThreads() throws Exception {
        WeightedSchedule s = WeightedSchedule.of(new int[] {90, 10});
        AtomicIntegerArray counts = new AtomicIntegerArray(2);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            Future<?>[] fs = new Future<?>[4];
            for (int t = 0; t < 4; t++) {
                fs[t] = pool.submit(() -> {
                    for (int i = 0; i < 25_000; i++) {
                        counts.incrementAndGet(s.next());
                    }
                });
            }
            for (Future<?> f : fs) {
                f.get(20, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(counts.get(0)).isEqualTo(90_000);
        assertThat(counts.get(1)).isEqualTo(10_000);
    }

    @Test
    void stickyKeysFollowTheWeightsAndStayWhenTheCanaryGrows() {
        SplittableRandom r = new SplittableRandom(7);
        long[] keys = new long[10_000];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = Hashing.hash("user-" + r.nextInt());
        }
        WeightedSchedule one = WeightedSchedule.of(new int[] {99, 1});
        WeightedSchedule half = WeightedSchedule.of(new int[] {50, 50});
        int canary = 0;
        for (long k : keys) {
            assertThat(one.forHash(k)).isEqualTo(one.forHash(k)); // stable
            if (one.forHash(k) == 1) {
                canary++;
                assertThat(half.forHash(k)).as("a canary user stays on the canary as it grows").isEqualTo(1);
            }
        }
        assertThat(canary).isBetween(70, 130); // ≈ 1 % of 10 000 random keys
        int halfCanary = 0;
        for (long k : keys) {
            halfCanary += half.forHash(k);
        }
        assertThat(halfCanary).isBetween(4800, 5200);
    }

    @Test
    void rejectsBadWeights() {
        assertThatThrownBy(() -> WeightedSchedule.of(new int[0])).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> WeightedSchedule.of(new int[] {0, 0})).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> WeightedSchedule.of(new int[] {-1, 2})).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void keysHashTheirUtf8Bytes() {
        for (String k : new String[] {"", "user-1", "ü", "日本", "a\uD83D\uDE00b", "lone\uD800x", "\u07FF\u0800\uFFFF"}) {
            assertThat(Hashing.hash(k)).as(k).isEqualTo(Hashing.hashBytes(k.getBytes(StandardCharsets.UTF_8)));
        }
        assertThat(Hashing.hash("user-1")).isNotEqualTo(Hashing.hash("user-2"));
    }
}
