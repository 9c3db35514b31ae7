package io.sluice.codec.testing;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Every buffer a test makes, made here: tracked by Netty's leak detector and registered, so that
 * {@link LeakDetectionExtension} fails the test that leaves one unreleased, naming where it was
 * allocated.
 *
 * <p>Why not {@code Unpooled}: Netty never leak-tracks unpooled heap buffers
 * ({@code Unpooled.buffer}, {@code copiedBuffer}, {@code wrappedBuffer} — the garbage collector
 * frees them, so {@code UnpooledByteBufAllocator} skips {@code toLeakAwareBuffer}), and a decoder
 * that forgets to release its input passes every test fed from them. {@link #ALLOC} makes unpooled
 * heap and direct buffers that are leak-aware; being unpooled they are never recycled, so a
 * released buffer keeps {@code refCnt() == 0} and the per-test check below is exact (a pooled
 * buffer's handle may already serve someone else). {@code TestSourcesTest} rejects
 * {@code Unpooled.*} allocations and the shared default allocators in test sources.
 *
 * <p>Pass {@link #ALLOC} wherever the code under test takes an allocator; what it allocates is
 * checked the same way.
 */
public final class Bufs {

    /** Unpooled, leak-aware, registering allocator; {@code buffer()} is direct (as in production). */
    public static final ByteBufAllocator ALLOC = new TrackingAllocator();

    private static final List<Handed> HANDED = new ArrayList<>();
    private static final StackWalker WALKER = StackWalker.getInstance();

    private Bufs() {
    }

    /** A heap buffer holding {@code text} in ISO-8859-1 (one byte per char, as HTTP heads travel). */
    public static ByteBuf copied(String text) {
        return copied(text.getBytes(StandardCharsets.ISO_8859_1));
    }

    /** A heap buffer holding a copy of {@code bytes}. */
    public static ByteBuf copied(byte[] bytes) {
        return copied(bytes, 0, bytes.length);
    }

    /** A heap buffer holding a copy of {@code length} bytes of {@code bytes} from {@code offset}. */
    public static ByteBuf copied(byte[] bytes, int offset, int length) {
        return ALLOC.heapBuffer(length).writeBytes(bytes, offset, length);
    }

    /** A direct buffer holding a copy of {@code bytes}. */
    public static ByteBuf direct(byte[] bytes) {
        return ALLOC.directBuffer(bytes.length).writeBytes(bytes);
    }

    public static ByteBuf heap(int initialCapacity) {
        return ALLOC.heapBuffer(initialCapacity);
    }

    public static ByteBuf direct(int initialCapacity) {
        return ALLOC.directBuffer(initialCapacity);
    }

    public static CompositeByteBuf composite() {
        return ALLOC.compositeBuffer();
    }

    /** How many buffers have been handed out and not yet checked. */
    static int mark() {
        synchronized (HANDED) {
            return HANDED.size();
        }
    }

    /**
     * Checks the buffers handed out since {@code mark} and forgets them: one line per buffer that
     * is still referenced ({@code refCnt() > 0}), with its reference count and where it was made.
     * Such a buffer is then released, so it is reported once.
     */
    static List<String> unreleasedSince(int mark) {
        List<Handed> batch;
        synchronized (HANDED) {
            int from = Math.min(mark, HANDED.size());
            List<Handed> tail = HANDED.subList(from, HANDED.size());
            batch = new ArrayList<>(tail);
            tail.clear();
        }
        List<String> open = new ArrayList<>();
        for (Handed h : batch) {
            int refCnt = h.buf.refCnt();
            if (refCnt != 0) {
                open.add("unreleased " + h.buf.getClass().getSimpleName() + " (refCnt " + refCnt + ", "
                        + h.buf.capacity() + " bytes) allocated at " + h.site);
                // reported once, here: released so that the leak detector does not report it again later
                h.buf.release(refCnt);
            }
        }
        return open;
    }

    private static <B extends ByteBuf> B register(B buf) {
        String site = WALKER.walk(frames -> frames
                .filter(f -> !f.getClassName().startsWith(Bufs.class.getName()) && !isLibrary(f.getClassName()))
                .limit(3)
                .map(StackWalker.StackFrame::toStackTraceElement)
                .map(StackTraceElement::toString)
                .collect(Collectors.joining(" <- ")));
        synchronized (HANDED) {
            HANDED.add(new Handed(buf, site));
        }
        return buf;
    }

    private static boolean isLibrary(String className) {
        return className.startsWith("io.netty.") || className.startsWith("org.junit.") || className.startsWith("java.")
                || className.startsWith("jdk.") || className.startsWith("sun.");
    }

    private record Handed(ByteBuf buf, String site) {
    }

    /** Like {@code UnpooledByteBufAllocator}, but heap buffers are leak-aware too, and all are registered. */
    private static final class TrackingAllocator extends AbstractByteBufAllocator {
        TrackingAllocator() {
            super(true);
        }

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            return register(toLeakAwareBuffer(new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity)));
        }

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            return register(toLeakAwareBuffer(new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity)));
        }

        @Override
        public CompositeByteBuf compositeHeapBuffer(int maxNumComponents) {
            return register(toLeakAwareBuffer(new CompositeByteBuf(this, false, maxNumComponents)));
        }

        @Override
        public CompositeByteBuf compositeDirectBuffer(int maxNumComponents) {
            return register(toLeakAwareBuffer(new CompositeByteBuf(this, true, maxNumComponents)));
        }

        @Override
        public boolean isDirectBufferPooled() {
            return false;
        }
    }
}
