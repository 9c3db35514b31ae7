package io.sluice.bench;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class LatencyHistogramTest {

    @Test
    void percentilesOfAUniformSpreadAreWithinTheBucketError() {
        LatencyHistogram h = new LatencyHistogram();
        for (int us = 1; us <= 10_000; us++) {
            h.recordNanos(us * 1_000L);
        }
        assertThat(h.count()).isEqualTo(10_000);
        assertThat(h.minMicros()).isEqualTo(1);
        assertThat(h.maxMicros()).isEqualTo(10_000);
        assertThat((double) h.percentileMicros(50)).isCloseTo(5_000, within(5_000 * 0.016));
        assertThat((double) h.percentileMicros(99)).isCloseTo(9_900, within(9_900 * 0.016));
        assertThat(h.percentileMicros(100)).isEqualTo(10_000);
        assertThat(h.meanMicros()).isCloseTo(5_000.5, within(0.001));
        assertThat(h.stdDevMicros()).isCloseTo(2886.75, within(0.1));
    }

    @Test
    void smallValuesAreExactAndBucketsCoverEveryLong() {
        for (long v = 0; v < 128; v++) {
            assertThat(LatencyHistogram.valueAt(LatencyHistogram.index(v))).isEqualTo(v);
        }
        for (long v : new long[] {128, 1_000, 123_456, 99_999_999, Long.MAX_VALUE / 1000}) {
            long upper = LatencyHistogram.valueAt(LatencyHistogram.index(v));
            assertThat(upper).isGreaterThanOrEqualTo(v);
            assertThat((double) upper - v).isLessThanOrEqualTo(v / 64.0);
        }
    }

    @Test
    void mergingAddsCountsAndExtremes() {
        LatencyHistogram a = new LatencyHistogram();
        LatencyHistogram b = new LatencyHistogram();
        a.recordNanos(1_000);
        b.recordNanos(3_000_000);
        a.add(b);
        assertThat(a.count()).isEqualTo(2);
        assertThat(a.maxMicros()).isEqualTo(3_000);
        assertThat(a.percentileMicros(50)).isEqualTo(1);
        assertThat(LatencyHistogram.format(812)).isEqualTo("812.00us");
        assertThat(LatencyHistogram.format(1_250)).isEqualTo("1.25ms");
    }
}
