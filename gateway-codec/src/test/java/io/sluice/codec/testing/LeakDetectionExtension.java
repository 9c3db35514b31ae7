package io.sluice.codec.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Fails a test class when Netty reports a leaked ByteBuf (or any other tracked resource).
 *
 * <p>Registered for every test class of the modules that use Netty through
 * {@code META-INF/services/org.junit.jupiter.api.extension.Extension} and
 * {@code junit.jupiter.extensions.autodetection.enabled=true}. The build runs tests with
 * {@code -Dio.netty.leakDetection.level=PARANOID}, so every buffer is tracked. After each class it
 * collects garbage, lets the detectors poll their reference queues, and fails if anything leaked,
 * printing Netty's access records.
 */
public final class LeakDetectionExtension implements BeforeAllCallback, AfterAllCallback {

    private static final List<String> LEAKS = new ArrayList<>();

    static {
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new RecordingFactory());
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        // Leaks of earlier classes found late still belong to them: drain before this class starts.
        collect();
        synchronized (LEAKS) {
            LEAKS.clear();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        List<String> found = collect();
        if (!found.isEmpty()) {
            throw new AssertionError(found.size() + " ByteBuf leak(s) in " + context.getDisplayName() + ":\n"
                    + String.join("\n----\n", found));
        }
    }

    /** Forces garbage collection and leak-queue polling; returns (and clears) what was reported. */
    public static List<String> collect() {
        for (int round = 0; round < 5; round++) {
            System.gc();
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            // Allocating tracked buffers makes each detector poll its reference queue.
            for (int i = 0; i < 8; i++) {
                ByteBuf a = PooledByteBufAllocator.DEFAULT.directBuffer(1);
                a.release();
                ByteBuf b = UnpooledByteBufAllocator.DEFAULT.heapBuffer(1);
                b.release();
            }
        }
        synchronized (LEAKS) {
            List<String> copy = new ArrayList<>(LEAKS);
            LEAKS.clear();
            return copy;
        }
    }

    private static final class RecordingFactory extends ResourceLeakDetectorFactory {
        @Override
        @SuppressWarnings("deprecation")
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval, long maxActive) {
            return new RecordingDetector<>(resource, samplingInterval);
        }

        @Override
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval) {
            return new RecordingDetector<>(resource, samplingInterval);
        }
    }

    private static final class RecordingDetector<T> extends ResourceLeakDetector<T> {
        RecordingDetector(Class<T> resource, int samplingInterval) {
            super(resource, samplingInterval);
        }

        @Override
        protected void reportTracedLeak(String resourceType, String records) {
            synchronized (LEAKS) {
                LEAKS.add("LEAK " + resourceType + records);
            }
            super.reportTracedLeak(resourceType, records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
            synchronized (LEAKS) {
                LEAKS.add("LEAK " + resourceType + " (no records)");
            }
            super.reportUntracedLeak(resourceType);
        }
    }
}
