package io.sluice.bench;

import io.netty.util.ResourceLeakDetector;
import io.sluice.codec.testing.LeakDetectionExtension;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** This module's tests run under the leak checks (autodetected from the codec test jar) at PARANOID. */
class LeakChecksTest {

    @Test
    void theLeakDetectionExtensionWatchesThisModule() {
        assertThat(LeakDetectionExtension.isWatching(LeakChecksTest.class)).isTrue();
        assertThat(ResourceLeakDetector.getLevel()).isEqualTo(ResourceLeakDetector.Level.PARANOID);
    }
}
