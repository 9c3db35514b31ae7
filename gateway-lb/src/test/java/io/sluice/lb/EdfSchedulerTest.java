package io.sluice.lb;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class EdfSchedulerTest {

    private static List<Integer> picks(EdfScheduler s, double[] w, int n) {
        List<Integer> out = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            int i = s.top();
            s.advanceTop(w[i]);
            out.add(i);
        }
        return out;
    }

    @Test
    void firstSixPicksFollowDeadlinesWithFifoTies() {
        double[] w = {1, 2, 3};
        // deadlines, FIFO among equal ones: 8082(.333) 8081(.5) 8082(.667) 8080(1.0) 8081(1.0) 8082(1.0) 8082(1.333) 8081(1.5) 8082(1.667)
        assertThat(picks(new EdfScheduler(w), w, 9)).containsExactly(2, 1, 2, 0, 1, 2, 2, 1, 2);
    }

    @Test
    void everyFullCycleIsExact() {
        double[] w = {1, 2, 3};
        EdfScheduler s = new EdfScheduler(w);
        for (int cycle = 0; cycle < 100; cycle++) {
            int[] c = new int[3];
            picks(s, w, 6).forEach(i -> c[i]++);
            assertThat(c).containsExactly(1, 2, 3);
        }
        assertThat(s.current()).isEqualTo(100.0);
    }

    @Test
    void equalWeightsAlternateInInsertionOrder() {
        double[] w = {5, 5, 5, 5};
        assertThat(picks(new EdfScheduler(w), w, 8)).containsExactly(0, 1, 2, 3, 0, 1, 2, 3);
    }

    @Test
    void zeroNegativeAndNanWeightsNeverBreakTheHeap() {
        double[] w = {0, -3, Double.NaN, 2};
        EdfScheduler s = new EdfScheduler(w);
        List<Integer> p = picks(s, w, 50);
        assertThat(p).containsOnly(3); // the broken ones get the minimum weight: far future, never backwards
        assertThat(s.current()).isGreaterThan(0);
    }

    @Test
    void rebasingTheClockKeepsExactRatios() {
        double[] w = {1, 3};
        EdfScheduler s = new EdfScheduler(w);
        picks(s, w, 4 * ((1 << 20) + 7)); // the clock passes the rebase point
        assertThat(s.current()).isLessThan(1 << 20);
        int[] c = new int[2];
        picks(s, w, 4000).forEach(i -> c[i]++);
        assertThat(c).containsExactly(1000, 3000);
    }

    @Test
    void renumberingSequenceNumbersKeepsTheOrderOfTies() {
        double[] w = {1, 2, 3, 2, 1, 6};
        EdfScheduler fresh = new EdfScheduler(w);
        EdfScheduler old = new EdfScheduler(w, EdfScheduler.SEQ_LIMIT - 20); // renumbers after about 14 picks
        assertThat(picks(old, w, 600)).isEqualTo(picks(fresh, w, 600));
        assertThat(old.counter()).isLessThan(1000);
    }
}
