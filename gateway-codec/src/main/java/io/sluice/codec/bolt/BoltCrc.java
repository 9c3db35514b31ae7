package io.sluice.codec.bolt;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.FastThreadLocal;

import java.nio.ByteBuffer;
import java.util.zip.CRC32;

/**
 * CRC32 (zlib/IEEE, {@link CRC32}) over a range of a buffer, as bolt's {@code CrcUtil} computes it
 * for v2 frames: over every byte from the protocol code through the last content byte.
 *
 * <p>Allocates nothing in the common cases: one {@link CRC32} and one small scratch array per
 * thread; heap buffers are read in place; direct ranges up to {@link #SCRATCH_BYTES} are copied
 * into the scratch array (a derived direct buffer, such as a frame's slice, would otherwise build
 * two {@link ByteBuffer} views per call); longer ones go through a NIO view, whose cost is small
 * next to theirs.
 */
final class BoltCrc {

    /** Direct ranges up to this length are copied to a per-thread array rather than viewed through NIO. */
    static final int SCRATCH_BYTES = 8192;

    private static final class State {
        final CRC32 crc = new CRC32();
        final byte[] scratch = new byte[SCRATCH_BYTES];
    }

    private static final FastThreadLocal<State> STATE = new FastThreadLocal<>() {
        @Override
        protected State initialValue() {
            return new State();
        }
    };

    private BoltCrc() {
    }

    /** CRC32 of {@code length} bytes of {@code buf} from absolute {@code index}; indices are untouched. */
    static int crc32(ByteBuf buf, int index, int length) {
        State st = STATE.get();
        CRC32 crc = st.crc;
        crc.reset();
        if (buf.hasArray()) {
            crc.update(buf.array(), buf.arrayOffset() + index, length);
        } else if (length <= SCRATCH_BYTES) {
            buf.getBytes(index, st.scratch, 0, length);
            crc.update(st.scratch, 0, length);
        } else if (buf.nioBufferCount() == 1) {
            // internalNioBuffer: a view; its position/limit are ours to use.
            ByteBuffer nio = buf.internalNioBuffer(index, length);
            crc.update(nio);
        } else {
            for (ByteBuffer nio : buf.nioBuffers(index, length)) {
                crc.update(nio);
            }
        }
        return (int) crc.getValue();
    }
}
