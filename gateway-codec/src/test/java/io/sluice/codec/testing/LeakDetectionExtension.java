package io.sluice.codec.testing;

import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import io.netty.util.ResourceLeakTracker;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Fails the test that leaks a ByteBuf (or any other resource Netty tracks).
 *
 * <p>Registered for every test class of the modules that use Netty through
 * {@code META-INF/services/org.junit.jupiter.api.extension.Extension} and
 * {@code junit.jupiter.extensions.autodetection.enabled=true} (each module's
 * {@code junit-platform.properties}). The build runs tests with
 * {@code -Dio.netty.leakDetection.level=PARANOID}, so every leak-aware buffer is tracked.
 *
 * <p>After each test (after its {@code @AfterEach} methods) two checks run:
 * <ol>
 *   <li>every buffer the test got from {@link Bufs} must have {@code refCnt() == 0}; an unreleased one
 *       fails the test with the place it was allocated. Exact and free: no garbage collection.</li>
 *   <li>if the test (or a thread it started) created any tracked buffer, one garbage collection runs
 *       and Netty's detector polls its reference queue; a report fails the test, with Netty's access
 *       records. Tests that allocate no tracked buffer pay nothing. A leaked buffer still reachable
 *       from the test instance is collected one test later: the records name the allocating test.</li>
 * </ol>
 * Reports found before a class starts or after it ends (an {@code @AfterAll}, a background thread,
 * a late collection) fail that class: nothing is cleared unseen. The bookkeeping is global, so
 * test classes must not run in parallel within one JVM (the build does not run them so).
 */
public final class LeakDetectionExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

    private static final List<String> LEAKS = new ArrayList<>();
    private static final List<RecordingDetector<?>> DETECTORS = new CopyOnWriteArrayList<>();
    /** Resources tracked so far (every leak-aware buffer made, from any thread). */
    private static final AtomicLong TRACKED = new AtomicLong();
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(LeakDetectionExtension.class);

    private static final int MAX_SHOWN = 10;

    private static volatile String lastFinished = "(nothing yet)";
    private static final java.util.Set<Class<?>> WATCHED = java.util.concurrent.ConcurrentHashMap.newKeySet();

    static {
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new RecordingFactory());
    }

    /** True while {@code testClass} runs under this extension (a module's test can check it is wired in). */
    public static boolean isWatching(Class<?> testClass) {
        return WATCHED.contains(testClass);
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getTestClass().ifPresent(WATCHED::add);
        // a @Nested class runs inside its outer class, whose class-level buffers may still be in use
        boolean topLevel = context.getParent().flatMap(ExtensionContext::getTestClass).isEmpty();
        List<String> found = new ArrayList<>(topLevel ? Bufs.unreleasedSince(0) : List.of());
        found.addAll(collect(1));
        context.getStore(NS).put("classMark", Bufs.mark());
        if (!found.isEmpty()) {
            throw failure(found, "reported before " + context.getDisplayName() + " started: leaked after "
                    + lastFinished + " ended (an @AfterAll, a static initializer, a background thread)");
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        context.getStore(NS).put("mark", Bufs.mark());
        context.getStore(NS).put("tracked", TRACKED.get());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        Integer mark = context.getStore(NS).get("mark", Integer.class);
        Long tracked = context.getStore(NS).get("tracked", Long.class);
        List<String> found = new ArrayList<>(mark == null ? List.of() : Bufs.unreleasedSince(mark));
        if (tracked == null || TRACKED.get() != tracked) {
            found.addAll(collect(1));
        }
        String name = context.getRequiredTestClass().getSimpleName() + " " + context.getDisplayName();
        lastFinished = name;
        if (!found.isEmpty()) {
            throw failure(found, "in " + name);
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        Integer mark = context.getStore(NS).get("classMark", Integer.class);
        List<String> found = new ArrayList<>(Bufs.unreleasedSince(mark == null ? 0 : mark));
        found.addAll(collect(1));
        lastFinished = context.getDisplayName();
        if (!found.isEmpty()) {
            throw failure(found, "in " + context.getDisplayName() + " (its @BeforeAll/@AfterAll, or found late)");
        }
    }

    private static AssertionError failure(List<String> found, String where) {
        List<String> shown = found.size() <= MAX_SHOWN ? found : found.subList(0, MAX_SHOWN);
        String more = found.size() > MAX_SHOWN ? "\n---- and " + (found.size() - MAX_SHOWN) + " more" : "";
        return new AssertionError(found.size() + " ByteBuf leak(s) " + where + ":\n" + String.join("\n----\n", shown) + more);
    }

    /** Collects garbage twice and lets the detectors poll; returns (and clears) what was reported. */
    public static List<String> collect() {
        return collect(2);
    }

    /**
     * Runs {@code rounds} garbage collections, each followed by a wait until the reference handler
     * has enqueued what it found and by a poll of every detector's queue; returns and clears the reports.
     */
    static List<String> collect(int rounds) {
        for (int round = 0; round < rounds; round++) {
            ReferenceQueue<Object> queue = new ReferenceQueue<>();
            WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
            System.gc();
            try {
                // the sentinel is enqueued with the references this collection cleared
                if (queue.remove(200) == sentinel) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            for (RecordingDetector<?> d : DETECTORS) {
                d.poll();
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
            DETECTORS.add(this);
        }

        @Override
        public ResourceLeakTracker<T> track(T obj) {
            TRACKED.incrementAndGet();
            return super.track(obj);
        }

        @Override
        public ResourceLeakTracker<T> trackForcibly(T obj) {
            TRACKED.incrementAndGet();
            return super.trackForcibly(obj);
        }

        /** Tracking an object makes the detector drain its reference queue and report what it finds. */
        @SuppressWarnings("unchecked")
        void poll() {
            Object probe = new Object();
            ResourceLeakTracker<T> t = super.trackForcibly((T) probe);
            if (t != null) {
                t.close((T) probe);
            }
        }

        @Override
        protected boolean needReport() {
            return true; // record leaks whatever the logging configuration
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
