package io.sluice.codec.bolt;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.FastThreadLocal;

import java.nio.ByteBuffer;
import java.util.zip.CRC32;

/**
 * CRC32 (zlib/IEEE, {@link CRC32}) over a range of a buffer, as bolt's {@code CrcUtil} computes it
 * for v2 frames: over every byte from the protocol code through the last content byte.
 *
 * <p>Uses one {@link CRC32} per thread and the buffer's backing array or internal NIO buffer, so
 * the common cases allocate nothing.
 */
final class BoltCrc {

    private static final FastThreadLocal<CRC32> CRC = new FastThreadLocal<>() {
        @Override
        protected CRC32 initialValue() {
            return new CRC32();
        }
    };

    private BoltCrc() {
    }

    /** CRC32 of {@code length} bytes of {@code buf} from absolute {@code index}; indices are untouched. */
    static int crc32(ByteBuf buf, int index, int length) {
        CRC32 crc = CRC.get();
        crc.reset();
        if (buf.hasArray()) {
            crc.update(buf.array(), buf.arrayOffset() + index, length);
        } else if (buf.nioBufferCount() == 1) {
            // internalNioBuffer: a view without allocation; its position/limit are ours to use.
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
