package io.sluice.server.policy.ratelimit;

import io.sluice.core.time.ManualScheduler;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The Redis reconnect schedule on a fake clock: min, doubling, capped at max, reset by a success. */
class ReconnectorTest {

    private static final long MS = 1_000_000L;

    @Test
    void backsOffExponentiallyToTheCapAndResetsOnSuccess() {
        ManualScheduler s = new ManualScheduler();
        List<Long> attempts = new ArrayList<>();
        boolean[] succeed = {false};
        Reconnector[] r = new Reconnector[1];
        r[0] = new Reconnector(s, 100 * MS, 1000 * MS, () -> {
            attempts.add(s.nanoTime() / MS);
            if (succeed[0]) {
                r[0].succeeded();
            } else {
                r[0].failed();
            }
        });
        r[0].failed(); // the link went down at t=0
        r[0].failed(); // a second report while an attempt is scheduled changes nothing
        s.advance(Duration.ofSeconds(5));
        // 100, +200, +400, +800, +1000 (cap), +1000, ...
        assertThat(attempts).startsWith(100L, 300L, 700L, 1500L, 2500L, 3500L, 4500L);
        assertThat(attempts).hasSize(7);
        succeed[0] = true;
        s.advance(Duration.ofSeconds(1));
        assertThat(attempts).hasSize(8).last().isEqualTo(5500L);
        assertThat(r[0].nextDelayNanos()).isEqualTo(100 * MS);
        succeed[0] = false;
        long down = s.nanoTime() / MS;
        r[0].failed(); // lost again: back to the first delay
        s.advance(Duration.ofMillis(100));
        assertThat(attempts).hasSize(9).last().isEqualTo(down + 100);
        r[0].close();
        s.advance(Duration.ofSeconds(10));
        assertThat(attempts).hasSize(9);
    }
}
