package io.sluice.core.time;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ManualSchedulerTest {

    @Test
    void runsTasksInTimeOrderWithTheClockAtTheirDueTime() {
        ManualScheduler s = new ManualScheduler();
        List<String> log = new ArrayList<>();
        s.schedule(() -> log.add("b@" + s.nanoTime()), 200);
        s.schedule(() -> log.add("a@" + s.nanoTime()), 100);
        s.schedule(() -> log.add("c@" + s.nanoTime()), 200);
        s.advanceNanos(150);
        assertThat(log).containsExactly("a@100");
        s.advanceNanos(100);
        assertThat(log).containsExactly("a@100", "b@200", "c@200");
        assertThat(s.nanoTime()).isEqualTo(250);
    }

    @Test
    void fixedDelayRepeatsUntilCancelled() {
        ManualScheduler s = new ManualScheduler();
        List<Long> runs = new ArrayList<>();
        Cancellable c = s.scheduleWithFixedDelay(() -> runs.add(s.nanoTime()), 10, 100);
        s.advance(Duration.ofNanos(320));
        assertThat(runs).containsExactly(10L, 110L, 210L, 310L);
        assertThat(c.cancel()).isTrue();
        s.advance(Duration.ofNanos(1000));
        assertThat(runs).hasSize(4);
        assertThat(s.pendingTasks()).isZero();
    }

    @Test
    void cancelledOneShotNeverRuns() {
        ManualScheduler s = new ManualScheduler();
        boolean[] ran = {false};
        Cancellable c = s.schedule(() -> ran[0] = true, 5);
        assertThat(c.cancel()).isTrue();
        s.advanceNanos(10);
        assertThat(ran[0]).isFalse();
        assertThat(c.cancel()).isFalse();
    }
}
