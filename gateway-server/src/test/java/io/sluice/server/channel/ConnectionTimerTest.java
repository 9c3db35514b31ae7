package io.sluice.server.channel;

import io.sluice.core.time.ManualScheduler;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ConnectionTimerTest {

    final ManualScheduler clock = new ManualScheduler(1_000_000_000L);
    final List<Long> fired = new ArrayList<>();
    final ConnectionTimer timer = new ConnectionTimer(clock, () -> fired.add(clock.nanoTime()));

    @Test
    void firesExactlyAtItsDeadline() {
        long t0 = clock.nanoTime();
        timer.arm(t0 + 100);
        clock.advanceNanos(99);
        assertThat(fired).isEmpty();
        assertThat(timer.isArmed()).isTrue();
        clock.advanceNanos(1);
        assertThat(fired).containsExactly(t0 + 100);
        assertThat(timer.isArmed()).isFalse();
    }

    @Test
    void laterDeadlinesWhileArmedScheduleNothing() {
        long t0 = clock.nanoTime();
        timer.arm(t0 + 100);
        timer.arm(t0 + 200);
        timer.arm(t0 + 100);
        assertThat(clock.pendingTasks()).isEqualTo(1);
        assertThat(timer.due()).isEqualTo(t0 + 100);
        clock.advanceNanos(200);
        assertThat(fired).containsExactly(t0 + 100); // the owner re-arms for what is left
    }

    @Test
    void anEarlierDeadlineReArms() {
        long t0 = clock.nanoTime();
        timer.arm(t0 + 100);
        timer.arm(t0 + 40);
        assertThat(clock.pendingTasks()).isEqualTo(1);
        clock.advanceNanos(40);
        assertThat(fired).containsExactly(t0 + 40);
        clock.advanceNanos(100);
        assertThat(fired).hasSize(1); // the cancelled task does not fire
    }

    @Test
    void theHorizonCapsHowFarOutItIsScheduled() {
        long t0 = clock.nanoTime();
        timer.arm(t0 + 1000, 300);
        assertThat(timer.due()).isEqualTo(t0 + 300);
        timer.arm(t0 + 500, 300); // later than armed: nothing moves
        assertThat(clock.pendingTasks()).isEqualTo(1);
        clock.advanceNanos(300);
        assertThat(fired).containsExactly(t0 + 300);
        timer.arm(t0 + 500, 300);
        assertThat(timer.due()).isEqualTo(t0 + 500);
        clock.advanceNanos(200);
        assertThat(fired).containsExactly(t0 + 300, t0 + 500);
    }

    @Test
    void cancelledTimerDoesNotFireAndCanBeArmedAgain() {
        long t0 = clock.nanoTime();
        timer.arm(t0 + 100);
        timer.cancel();
        assertThat(timer.isArmed()).isFalse();
        clock.advanceNanos(100);
        assertThat(fired).isEmpty();
        timer.armIn(50);
        clock.advanceNanos(50);
        assertThat(fired).containsExactly(t0 + 150);
    }

    @Test
    void theOwnerCanReArmFromItsTask() {
        List<Long> ticks = new ArrayList<>();
        ConnectionTimer[] self = new ConnectionTimer[1];
        self[0] = new ConnectionTimer(clock, () -> {
            ticks.add(clock.nanoTime());
            if (ticks.size() < 3) {
                self[0].armIn(10);
            }
        });
        long t0 = clock.nanoTime();
        self[0].armIn(10);
        clock.advanceNanos(100);
        assertThat(ticks).containsExactly(t0 + 10, t0 + 20, t0 + 30);
    }
}
