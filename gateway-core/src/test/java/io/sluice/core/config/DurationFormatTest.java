package io.sluice.core.config;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DurationFormatTest {

    @Test
    void parsesTheFormsOperatorsWrite() {
        assertThat(DurationFormat.parse("250ms")).isEqualTo(Duration.ofMillis(250));
        assertThat(DurationFormat.parse("5s")).isEqualTo(Duration.ofSeconds(5));
        assertThat(DurationFormat.parse("1.5s")).isEqualTo(Duration.ofMillis(1500));
        assertThat(DurationFormat.parse("1m30s")).isEqualTo(Duration.ofSeconds(90));
        assertThat(DurationFormat.parse("2h")).isEqualTo(Duration.ofHours(2));
        assertThat(DurationFormat.parse("100us")).isEqualTo(Duration.ofNanos(100_000));
        assertThat(DurationFormat.parse("0")).isEqualTo(Duration.ZERO);
    }

    @Test
    void rejectsNumbersWithoutUnitsAndGarbage() {
        assertThatThrownBy(() -> DurationFormat.parse("5")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> DurationFormat.parse("five seconds")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> DurationFormat.parse("-1s")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void formatsRoundTrip() {
        for (String s : new String[] {"250ms", "5s", "90s", "100us", "0s"}) {
            assertThat(DurationFormat.format(DurationFormat.parse(s))).isEqualTo(s);
        }
    }
}
