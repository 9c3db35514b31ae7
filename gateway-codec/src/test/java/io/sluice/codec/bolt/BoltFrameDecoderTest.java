package io.sluice.codec.bolt;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import static io.sluice.codec.bolt.BoltGolden.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertNull;

class BoltFrameDecoderTest {

    static Stream<byte[]> goldenFrames() {
        return Stream.of(V1_HEARTBEAT, V1_HEARTBEAT_ACK, V2_HEARTBEAT, V2_HEARTBEAT_ACK, V1_ONEWAY, V2_CRC_ONEWAY,
                V1_REQUEST, V1_RESPONSE, SOFALOAD_REQUEST);
    }

    @Test
    void v1HeartbeatAndAck() {
        BoltFrame hb = decodeOne(V1_HEARTBEAT);
        assertThat(hb.protocol()).isEqualTo(1);
        assertThat(hb.ver1()).isZero();
        assertThat(hb.type()).isEqualTo(BoltType.REQUEST);
        assertThat(hb.isHeartbeat()).isTrue();
        assertThat(hb.ver2()).isEqualTo(1);
        assertThat(hb.requestId()).isEqualTo(42);
        assertThat(hb.codec()).isEqualTo(1);
        assertThat(hb.timeoutMillis()).isEqualTo(-1);
        assertThat(hb.bodyLength()).isZero();
        assertThat(hb.framing()).isEqualTo(BoltFraming.V1);
        assertThat(hb.release()).isTrue();

        BoltFrame ack = decodeOne(V1_HEARTBEAT_ACK);
        assertThat(ack.type()).isEqualTo(BoltType.RESPONSE);
        assertThat(ack.isHeartbeat()).isTrue();
        assertThat(ack.status()).isEqualTo(BoltStatus.SUCCESS);
        assertThat(ack.requestId()).isEqualTo(42);
        assertThat(ack.frameLength()).isEqualTo(20);
        assertThat(ack.release()).isTrue();
    }

    @Test
    void v2HeartbeatAndAck() {
        BoltFrame hb = decodeOne(V2_HEARTBEAT);
        assertThat(hb.protocol()).isEqualTo(2);
        assertThat(hb.ver1()).isEqualTo(1);
        assertThat(hb.switchByte()).isZero();
        assertThat(hb.hasCrc()).isFalse();
        assertThat(hb.requestId()).isEqualTo(43);
        assertThat(hb.requestIdOffset()).isEqualTo(6);
        assertThat(hb.timeoutMillis()).isEqualTo(-1);
        assertThat(hb.framing()).isEqualTo(BoltFraming.V2_VER1);
        assertThat(hb.release()).isTrue();

        BoltFrame ack = decodeOne(V2_HEARTBEAT_ACK);
        assertThat(ack.isResponse()).isTrue();
        assertThat(ack.status()).isZero();
        assertThat(ack.frameLength()).isEqualTo(22);
        assertThat(ack.release()).isTrue();
    }

    @Test
    void v1Oneway() {
        BoltFrame f = decodeOne(V1_ONEWAY);
        assertThat(f.type()).isEqualTo(BoltType.ONEWAY);
        assertThat(f.isOneway()).isTrue();
        assertThat(f.cmdCode()).isEqualTo(BoltProtocol.CMD_RPC_REQUEST);
        assertThat(f.requestId()).isEqualTo(0x7d3);
        assertThat(f.className()).isEqualTo("java.lang.String");
        assertThat(Wire.hexOf(f.contentBytes())).isEqualTo("03636170");
        assertThat(f.headers()).isEmpty();
        assertThat(f.service()).isNull();
        assertThat(f.release()).isTrue();
    }

    @Test
    void v2OnewayWithCrc() {
        BoltFrame f = decodeOne(V2_CRC_ONEWAY);
        assertThat(f.ver1()).isEqualTo(2);
        assertThat(f.switchByte()).isEqualTo(1);
        assertThat(f.hasCrc()).isTrue();
        assertThat(f.framing()).isEqualTo(BoltFraming.V2_VER2_CRC);
        assertThat(f.requestId()).isEqualTo(0x7d4);
        assertThat(f.classLength()).isEqualTo(16);
        assertThat(f.contentLength()).isEqualTo(4);
        assertThat(f.frameLength()).isEqualTo(V2_CRC_ONEWAY.length);
        assertThat(Wire.hexOf(f.contentBytes())).isEqualTo("03636170");
        assertThat(f.release()).isTrue();
    }

    @Test
    void v1RequestAndResponse() {
        BoltFrame req = decodeOne(V1_REQUEST);
        assertThat(req.type()).isEqualTo(BoltType.REQUEST);
        assertThat(req.timeoutMillis()).isEqualTo(3000);
        assertThat(Wire.hexOf(req.contentBytes())).isEqualTo("026869");
        assertThat(req.release()).isTrue();

        BoltFrame resp = decodeOne(V1_RESPONSE);
        assertThat(resp.cmdCode()).isEqualTo(BoltProtocol.CMD_RPC_RESPONSE);
        assertThat(resp.status()).isEqualTo(BoltStatus.SUCCESS);
        assertThat(resp.requestId()).isEqualTo(7);
        assertThat(resp.contentBytes().toString(StandardCharsets.US_ASCII)).isEqualTo("\u0007echo:hi");
        assertThat(resp.release()).isTrue();
    }

    @Test
    void sofaloadRequestRoutingKeys() {
        BoltFrame f = decodeOne(SOFALOAD_REQUEST);
        assertThat(f.className()).isEqualTo(BoltProtocol.SOFA_REQUEST_CLASS);
        assertThat(f.timeoutMillis()).isEqualTo(5000);
        assertThat(f.service()).isEqualTo("com.alipay.test.TestService:1.0");
        assertThat(f.targetService()).isNull();
        assertThat(f.methodName()).isNull();
        assertThat(f.headers()).containsExactly(Map.entry("service", "com.alipay.test.TestService:1.0"));
        assertThat(f.release()).isTrue();
    }

    @ParameterizedTest
    @MethodSource("goldenFrames")
    void frameIsOneRetainedSliceOfTheInputWithTheSameBytes(byte[] golden) {
        EmbeddedChannel ch = new EmbeddedChannel(new BoltFrameDecoder());
        ByteBuf in = Wire.buf(golden, 0, golden.length);
        ch.writeInbound(in.retain());
        BoltFrame f = ch.readInbound();
        try {
            assertThat(Wire.bytesOf(f.content())).isEqualTo(golden);
            assertThat(f.frameLength()).isEqualTo(golden.length);
            // zero copy: the frame's buffer is a view of the input buffer
            in.setByte(golden.length - 1, golden[golden.length - 1] ^ 0x5a);
            assertThat(f.content().getByte(f.content().readerIndex() + golden.length - 1))
                    .isEqualTo((byte) (golden[golden.length - 1] ^ 0x5a));
        } finally {
            assertThat(in.release()).isFalse();
            assertThat(f.release()).isTrue();
        }
        assertThat(in.refCnt()).isZero();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @ParameterizedTest
    @MethodSource("goldenFrames")
    void everySplitOffsetYieldsTheSameFrame(byte[] golden) {
        for (int split = 0; split <= golden.length; split++) {
            EmbeddedChannel ch = new EmbeddedChannel(new BoltFrameDecoder());
            ch.writeInbound(Wire.buf(golden, 0, split));
            if (split < golden.length) {
                assertNull(ch.readInbound(), "frame emitted early at split " + split);
            }
            ch.writeInbound(Wire.buf(golden, split, golden.length));
            List<Object> out = Wire.drain(ch);
            assertThat(out).as("split %d", split).hasSize(1);
            BoltFrame f = (BoltFrame) out.get(0);
            assertThat(Wire.bytesOf(f.content())).isEqualTo(golden);
            assertThat(f.release()).isTrue();
            assertThat(ch.finishAndReleaseAll()).isFalse();
        }
    }

    @Test
    void allGoldenFramesBackToBackSplitAtEveryOffset() {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        List<byte[]> frames = goldenFrames().toList();
        frames.forEach(all::writeBytes);
        byte[] stream = all.toByteArray();
        for (int split = 0; split <= stream.length; split++) {
            EmbeddedChannel ch = new EmbeddedChannel(new BoltFrameDecoder());
            ch.writeInbound(Wire.buf(stream, 0, split));
            ch.writeInbound(Wire.buf(stream, split, stream.length));
            List<Object> out = Wire.drain(ch);
            assertThat(out).hasSize(frames.size());
            for (int i = 0; i < frames.size(); i++) {
                BoltFrame f = (BoltFrame) out.get(i);
                assertThat(Wire.bytesOf(f.content())).isEqualTo(frames.get(i));
                f.release();
            }
            assertThat(ch.finishAndReleaseAll()).isFalse();
        }
    }

    @Test
    void byteByByte() {
        EmbeddedChannel ch = new EmbeddedChannel(new BoltFrameDecoder());
        for (int i = 0; i < V2_CRC_ONEWAY.length; i++) {
            ch.writeInbound(Wire.buf(V2_CRC_ONEWAY, i, i + 1));
        }
        BoltFrame f = ch.readInbound();
        assertThat(Wire.bytesOf(f.content())).isEqualTo(V2_CRC_ONEWAY);
        f.release();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    // ---- oversized ------------------------------------------------------------------------------

    @Test
    void oversizedFrameIsRejectedFromItsHeaderSkippedAndDecodingResumes() {
        int max = 1024;
        EmbeddedChannel ch = new EmbeddedChannel(new BoltFrameDecoder(max));
        byte[] header = Wire.of().hex("01 01 0001 01 00000063 01 00000bb8 0010 0000").i32(100_000).bytes();
        ch.writeInbound(Wire.buf(header, 0, header.length));
        BoltDecodeError err = ch.readInbound();
        assertThat(err.kind()).isEqualTo(BoltDecodeError.Kind.FRAME_TOO_LARGE);
        assertThat(err.recoverable()).isTrue();
        assertThat(err.hasRequestId()).isTrue();
        assertThat(err.requestId()).isEqualTo(0x63);
        assertThat(err.type()).isEqualTo(BoltType.REQUEST);
        assertThat(err.framing()).isEqualTo(BoltFraming.V1);
        assertThat(err.answerable()).isTrue();
        assertThat(err.message()).contains("100038").contains("1024");

        // the body arrives in pieces and is dropped, not buffered; the next frame decodes fine
        byte[] body = new byte[16 + 100_000];
        for (int off = 0; off < body.length; off += 4096) {
            ch.writeInbound(Wire.buf(body, off, Math.min(body.length, off + 4096)));
            assertNull(ch.readInbound());
        }
        ch.writeInbound(Wire.buf(V1_REQUEST, 0, V1_REQUEST.length));
        BoltFrame next = ch.readInbound();
        assertThat(next.requestId()).isEqualTo(7);
        next.release();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void oversizedFrameFollowedByAnotherInTheSameBuffer() {
        EmbeddedChannel ch = new EmbeddedChannel(new BoltFrameDecoder(64));
        byte[] stream = Wire.of().hex("01 01 0001 01 00000001 01 00000bb8 0000 0000 00000064")
                .hex("00".repeat(100)).bytes();
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.writeBytes(stream);
        all.writeBytes(V1_REQUEST);
        byte[] both = all.toByteArray();
        ch.writeInbound(Wire.buf(both, 0, both.length));
        List<Object> out = Wire.drain(ch);
        assertThat(out).hasSize(2);
        assertThat(((BoltDecodeError) out.get(0)).kind()).isEqualTo(BoltDecodeError.Kind.FRAME_TOO_LARGE);
        BoltFrame f = (BoltFrame) out.get(1);
        assertThat(f.requestId()).isEqualTo(7);
        f.release();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    // ---- malformed ------------------------------------------------------------------------------

    @Test
    void unknownProtocolCode() {
        BoltDecodeError e = decodeError(Wire.of().hex("05 01 0001 01 00000007").bytes());
        assertThat(e.kind()).isEqualTo(BoltDecodeError.Kind.UNKNOWN_PROTOCOL);
        assertThat(e.protocol()).isEqualTo(5);
        assertThat(e.framing()).isNull();
        assertThat(e.answerable()).isFalse();
        assertThat(e.recoverable()).isFalse();
    }

    @Test
    void unknownV2Version() {
        BoltDecodeError e = decodeError(Wire.of().hex("02 03 01 0001 01 00000009 01 00 00000bb8 0000 0000 00000000").bytes());
        assertThat(e.kind()).isEqualTo(BoltDecodeError.Kind.UNKNOWN_VERSION);
        assertThat(e.requestId()).isEqualTo(9);
        assertThat(e.answerable()).isFalse();
    }

    @Test
    void badType() {
        BoltDecodeError e = decodeError(Wire.of().hex("01 07 0001 01 00000007 01 00000bb8 0000 0000 00000000").bytes());
        assertThat(e.kind()).isEqualTo(BoltDecodeError.Kind.BAD_TYPE);
        assertThat(e.type()).isNull();
        assertThat(e.answerable()).isFalse();
    }

    @Test
    void badCommandCodeForARequestIsAnswerable() {
        BoltDecodeError e = decodeError(Wire.of().hex("01 01 0064 01 00000011 01 00000bb8 0000 0000 00000000").bytes());
        assertThat(e.kind()).isEqualTo(BoltDecodeError.Kind.BAD_COMMAND_CODE);
        assertThat(e.requestId()).isEqualTo(0x11);
        assertThat(e.answerable()).isTrue();
    }

    @Test
    void requestCommandCodeOnAResponse() {
        BoltDecodeError e = decodeError(Wire.of().hex("01 00 0001 01 00000011 01 0000 0000 0000 00000000").bytes());
        assertThat(e.kind()).isEqualTo(BoltDecodeError.Kind.BAD_COMMAND_CODE);
        assertThat(e.type()).isEqualTo(BoltType.RESPONSE);
        assertThat(e.answerable()).isFalse();
    }

    @Test
    void negativeLengths() {
        assertThat(decodeError(Wire.of().hex("01 01 0001 01 00000001 01 00000bb8 8000 0000 00000000").bytes()).kind())
                .isEqualTo(BoltDecodeError.Kind.BAD_LENGTH);
        assertThat(decodeError(Wire.of().hex("01 01 0001 01 00000001 01 00000bb8 0000 ffff 00000000").bytes()).kind())
                .isEqualTo(BoltDecodeError.Kind.BAD_LENGTH);
        assertThat(decodeError(Wire.of().hex("02 02 00 0002 01 00000001 01 01 0000 0000 0000 ffffffff").bytes()).kind())
                .isEqualTo(BoltDecodeError.Kind.BAD_LENGTH);
    }

    @Test
    void crcMismatchThenEverythingIsDiscarded() {
        byte[] bad = V2_CRC_ONEWAY.clone();
        bad[bad.length - 6] ^= 0x01; // a content byte
        EmbeddedChannel ch = new EmbeddedChannel(new BoltFrameDecoder());
        ch.writeInbound(Wire.buf(bad, 0, bad.length));
        BoltDecodeError e = ch.readInbound();
        assertThat(e.kind()).isEqualTo(BoltDecodeError.Kind.CRC_MISMATCH);
        assertThat(e.framing()).isEqualTo(BoltFraming.V2_VER2_CRC);
        assertThat(e.requestId()).isEqualTo(0x7d4);
        assertThat(e.type()).isEqualTo(BoltType.ONEWAY);
        assertThat(e.answerable()).isFalse(); // oneway: nobody waits
        // the stream is out of sync: a valid frame after it is dropped, not decoded
        ch.writeInbound(Wire.buf(V1_REQUEST, 0, V1_REQUEST.length));
        assertNull(ch.readInbound());
        assertThat(ch.isOpen()).isTrue();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void truncatedFrameAtEndOfStream() {
        EmbeddedChannel ch = new EmbeddedChannel(new BoltFrameDecoder());
        ch.writeInbound(Wire.buf(V1_REQUEST, 0, 30));
        assertNull(ch.readInbound());
        ch.finish();
        BoltDecodeError e = ch.readInbound();
        assertThat(e.kind()).isEqualTo(BoltDecodeError.Kind.TRUNCATED);
        assertThat(e.requestId()).isEqualTo(7);
        assertNull(ch.readInbound());
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void randomGarbageNeverThrowsNorLeaks() {
        Random random = new Random(20240611);
        for (int round = 0; round < 500; round++) {
            byte[] garbage = new byte[1 + random.nextInt(200)];
            random.nextBytes(garbage);
            if (round % 3 == 0) {
                garbage[0] = (byte) (1 + random.nextInt(2)); // plausible protocol code
            }
            EmbeddedChannel ch = new EmbeddedChannel(new BoltFrameDecoder(4096));
            int split = random.nextInt(garbage.length + 1);
            ch.writeInbound(Wire.buf(garbage, 0, split));
            ch.writeInbound(Wire.buf(garbage, split, garbage.length));
            ch.writeInbound(Wire.buf(V1_REQUEST, 0, V1_REQUEST.length));
            ch.finish();
            for (Object m : Wire.drain(ch)) {
                assertThat(m).isInstanceOfAny(BoltFrame.class, BoltDecodeError.class);
                if (m instanceof BoltFrame f) {
                    f.release();
                }
            }
            ch.checkException();
        }
    }

    private static BoltFrame decodeOne(byte[] bytes) {
        EmbeddedChannel ch = new EmbeddedChannel(new BoltFrameDecoder());
        ch.writeInbound(Wire.buf(bytes, 0, bytes.length));
        BoltFrame f = ch.readInbound();
        assertThat(f).isNotNull();
        assertNull(ch.readInbound());
        assertThat(ch.finishAndReleaseAll()).isFalse();
        return f;
    }

    private static BoltDecodeError decodeError(byte[] bytes) {
        EmbeddedChannel ch = new EmbeddedChannel(new BoltFrameDecoder());
        ch.writeInbound(Wire.buf(bytes, 0, bytes.length));
        List<Object> out = Wire.drain(ch);
        assertThat(out).hasSize(1).first().isInstanceOf(BoltDecodeError.class);
        assertThat(ch.isOpen()).isTrue();
        ch.checkException();
        assertThat(ch.finishAndReleaseAll()).isFalse();
        return (BoltDecodeError) out.get(0);
    }
}
