package io.sluice.codec.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

import java.util.List;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * Proves the leak checks can fail, and fail the right test: sample classes (static nested, so the
 * build does not run them itself) run through the JUnit launcher with the extension autodetected.
 */
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

    @Test
    void bufsHeapBuffersAreLeakAwareUnlikeUnpooledOnes() {
        ByteBuf heap = Bufs.copied("abc");
        ByteBuf direct = Bufs.direct(4);
        try {
            assertThat(heap.getClass().getSimpleName()).contains("LeakAware");
            assertThat(heap.hasArray()).isTrue();
            assertThat(direct.getClass().getSimpleName()).contains("LeakAware");
            assertThat(direct.isDirect()).isTrue();
        } finally {
            heap.release();
            direct.release();
        }
    }

    @Test
    void aTestThatLeavesABufsBufferUnreleasedFailsNamingWhereItWasAllocated() {
        List<TestExecutionSummary.Failure> failures = run(LeavesABufUnreleased.class);
        assertThat(failures).hasSize(1);
        assertThat(failures.get(0).getTestIdentifier().getDisplayName()).isEqualTo("leaks()");
        assertThat(failures.get(0).getException()).hasMessageContaining("1 ByteBuf leak(s) in LeavesABufUnreleased leaks()")
                .hasMessageContaining("refCnt 2").hasMessageContaining("LeakDetectionExtensionTest.java");
    }

    @Test
    void aTestThatReleasesEverythingPasses() {
        assertThat(run(ReleasesEverything.class)).isEmpty();
    }

    @Test
    void aTestThatDropsAChannelAllocatorBufferFailsItselfNotTheNextOne() {
        List<TestExecutionSummary.Failure> failures = run(DropsATrackedBuffer.class);
        assertThat(failures).hasSize(1);
        assertThat(failures.get(0).getTestIdentifier().getDisplayName()).isEqualTo("a_drops()");
        assertThat(failures.get(0).getException()).hasMessageContaining("LEAK").hasMessageContaining("DropsATrackedBuffer.a_drops");
    }

    @Test
    void aLeakInAfterAllFailsTheClassInsteadOfBeingCleared() {
        List<TestExecutionSummary.Failure> failures = run(LeaksInAfterAll.class);
        assertThat(failures).hasSize(1);
        assertThat(failures.get(0).getTestIdentifier().isContainer()).isTrue();
        assertThat(failures.get(0).getException()).hasMessageContaining("LEAK").hasMessageContaining("LeaksInAfterAll.after");
    }

    @Test
    void aClassLevelBufferReleasedInAfterAllMayOutliveItsNestedClasses() {
        assertThat(run(HoldsABufferAcrossANestedClass.class)).isEmpty();
    }

    private static List<TestExecutionSummary.Failure> run(Class<?> sample) {
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request().selectors(selectClass(sample))
                .configurationParameter("junit.jupiter.extensions.autodetection.enabled", "true").build();
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        LauncherFactory.create().execute(request, listener);
        TestExecutionSummary summary = listener.getSummary();
        assertThat(summary.getTestsStartedCount()).as("sample tests ran").isPositive();
        return summary.getFailures().stream().collect(Collectors.toList());
    }

    static class LeavesABufUnreleased {
        @Test
        void leaks() {
            Bufs.copied("left behind").retain();
        }
    }

    static class ReleasesEverything {
        @Test
        void releases() {
            ByteBuf b = Bufs.copied("fine");
            ByteBuf slice = b.retainedSlice();
            slice.release();
            b.release();
        }
    }

    static class DropsATrackedBuffer {
        @Test
        void a_drops() {
            ByteBufAllocator.DEFAULT.buffer(8).writeLong(7);
        }

        @Test
        void b_clean() {
            ByteBufAllocator.DEFAULT.buffer(8).release();
        }
    }

    static class HoldsABufferAcrossANestedClass {
        static ByteBuf shared;

        @BeforeAll
        static void open() {
            shared = Bufs.copied("shared by the class");
        }

        @AfterAll
        static void close() {
            shared.release();
        }

        @Test
        void outer() {
            assertThat(shared.refCnt()).isOne();
        }

        @Nested
        class Inner {
            @Test
            void inner() {
                assertThat(shared.refCnt()).isOne();
                Bufs.copied("mine").release();
            }
        }
    }

    static class LeaksInAfterAll {
        @AfterAll
        static void after() {
            PooledByteBufAllocator.DEFAULT.directBuffer(8).writeLong(7);
        }

        @Test
        void clean() {
        }
    }
}
