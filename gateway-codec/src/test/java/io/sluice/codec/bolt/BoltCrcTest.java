package io.sluice.codec.bolt;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.sluice.codec.testing.Bufs;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Random;
import java.util.zip.CRC32;

import static org.assertj.core.api.Assertions.assertThat;

/** Every way a frame's bytes can be held gives bolt's CRC32 (heap, direct slice below and above the scratch size, composite). */
class BoltCrcTest {

    @ParameterizedTest
    @ValueSource(ints = {1, 100, BoltCrc.SCRATCH_BYTES, BoltCrc.SCRATCH_BYTES + 1, 70_000})
    void allLayoutsAgreeWithJavasCrc32(int length) {
        byte[] bytes = new byte[length + 10];
        new Random(length).nextBytes(bytes);
        CRC32 expected = new CRC32();
        expected.update(bytes, 5, length);
        int want = (int) expected.getValue();

        ByteBuf heap = Bufs.copied(bytes);
        ByteBuf direct = Bufs.direct(bytes);
        ByteBuf slice = direct.retainedSlice(3, bytes.length - 3); // a derived buffer, as frames are
        CompositeByteBuf composite = Bufs.composite()
                .addComponent(true, Bufs.direct(7).writeBytes(bytes, 0, 7))
                .addComponent(true, Bufs.direct(bytes.length - 7).writeBytes(bytes, 7, bytes.length - 7));
        try {
            assertThat(BoltCrc.crc32(heap, 5, length)).isEqualTo(want);
            assertThat(BoltCrc.crc32(direct, 5, length)).isEqualTo(want);
            assertThat(BoltCrc.crc32(slice, 2, length)).isEqualTo(want);
            assertThat(BoltCrc.crc32(composite, 5, length)).isEqualTo(want);
            assertThat(slice.readerIndex()).isZero();
            assertThat(direct.readerIndex()).isZero();
        } finally {
            heap.release();
            slice.release();
            direct.release();
            composite.release();
        }
    }
}
