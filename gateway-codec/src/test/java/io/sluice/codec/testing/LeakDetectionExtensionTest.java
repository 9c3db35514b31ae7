package io.sluice.codec.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Proves the leak check can fail: a buffer dropped without release is reported. */
class LeakDetectionExtensionTest {

    @Test
    void runsAtParanoidLevel() {
        assertThat(ResourceLeakDetector.getLevel()).isEqualTo(ResourceLeakDetector.Level.PARANOID);
    }

    @Test
    void aDroppedBufferIsReportedAndAReleasedOneIsNot() {
        LeakDetectionExtension.collect();
        ByteBuf released = PooledByteBufAllocator.DEFAULT.directBuffer(16);
        released.writeInt(1);
        released.release();
        assertThat(LeakDetectionExtension.collect()).isEmpty();

        leakOne();
        assertThat(LeakDetectionExtension.collect()).anySatisfy(s -> assertThat(s).contains("LEAK"));
    }

    private static void leakOne() {
        ByteBuf leaked = PooledByteBufAllocator.DEFAULT.directBuffer(16);
        leaked.writeInt(42);
        // dropped on purpose: no release
    }
}
