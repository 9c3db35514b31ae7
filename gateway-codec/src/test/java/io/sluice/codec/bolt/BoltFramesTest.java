package io.sluice.codec.bolt;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.codec.testing.Bufs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.stream.IntStream;
import java.util.zip.CRC32;

import static io.sluice.codec.bolt.BoltGolden.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BoltFramesTest {

    private static final ByteBufAllocator ALLOC = Bufs.ALLOC;

    @Test
    void heartbeatsAndAcksMatchTheCapturedBytes() {
        assertBytes(BoltFrames.heartbeat(ALLOC, BoltFraming.V1, 42), V1_HEARTBEAT);
        assertBytes(BoltFrames.heartbeatAck(ALLOC, BoltFraming.V1, 42), V1_HEARTBEAT_ACK);
        assertBytes(BoltFrames.heartbeat(ALLOC, BoltFraming.V2_VER1, 43), V2_HEARTBEAT);
        assertBytes(BoltFrames.heartbeatAck(ALLOC, BoltFraming.V2_VER1, 43), V2_HEARTBEAT_ACK);

        BoltFrame hb = BoltFrameTest.decode(V2_HEARTBEAT);
        assertBytes(BoltFrames.heartbeatAck(ALLOC, hb), V2_HEARTBEAT_ACK);
        hb.release();
    }

    @Test
    void heartbeatsNeverCarryACrc() {
        BoltFrame hb = BoltFrames.heartbeat(ALLOC, BoltFraming.V2_VER2_CRC, 1);
        assertThat(hb.hasCrc()).isFalse();
        assertThat(hb.switchByte()).isZero();
        assertThat(hb.ver1()).isEqualTo(2);
        assertThat(hb.frameLength()).isEqualTo(24);
        hb.release();
    }

    @Test
    void heartbeatAckRejectsNonHeartbeats() {
        BoltFrame req = BoltFrameTest.decode(V1_REQUEST);
        assertThatThrownBy(() -> BoltFrames.heartbeatAck(ALLOC, req)).isInstanceOf(IllegalArgumentException.class);
        req.release();
    }

    @Test
    void v1ErrorResponseLayout() {
        BoltFrame req = BoltFrameTest.decode(V1_REQUEST);
        BoltFrame resp = BoltFrames.errorResponse(ALLOC, req, BoltStatus.TIMEOUT, "upstream timeout");
        req.release();
        byte[] expected = Wire.of().hex("01 00 0002 01 00000007 01 0007 0010 0000 00000011")
                .ascii("java.lang.String").hex("10").ascii("upstream timeout").bytes();
        assertBytes(resp, expected);
    }

    @Test
    void v2CrcErrorResponseHasAValidTrailerAndDecodes() {
        BoltFrame resp = BoltFrames.errorResponse(ALLOC, BoltFraming.V2_VER2_CRC, 0x7d4, BoltStatus.NO_PROCESSOR,
                "no route for service com.foo.Bar:1.0");
        byte[] bytes = Wire.bytesOf(resp.content());
        CRC32 crc = new CRC32();
        crc.update(bytes, 0, bytes.length - 4);
        assertThat(resp.content().getInt(bytes.length - 4)).isEqualTo((int) crc.getValue());
        BoltFrame back = BoltFrameTest.decode(bytes);
        assertThat(back.status()).isEqualTo(BoltStatus.NO_PROCESSOR);
        assertThat(back.requestId()).isEqualTo(0x7d4);
        assertThat(back.framing()).isEqualTo(BoltFraming.V2_VER2_CRC);
        assertThat(back.className()).isEqualTo("java.lang.String");
        // long form: 'S' + 16-bit length
        assertThat(back.contentBytes().getByte(0)).isEqualTo((byte) 'S');
        assertThat(back.contentBytes().getShort(1)).isEqualTo((short) 36);
        back.release();
        resp.release();
    }

    @ParameterizedTest
    @EnumSource(BoltFraming.class)
    void everyErrorResponseHasANonEmptyBodyInEveryFraming(BoltFraming framing) {
        for (int status : definedErrorStatuses()) {
            for (String msg : new String[] {null, "", "x", "é漢字\u0001", "y".repeat(5000)}) {
                BoltFrame resp = BoltFrames.errorResponse(ALLOC, framing, 1, status, msg);
                assertThat(resp.bodyLength()).isPositive();
                assertThat(resp.contentLength()).isPositive();
                assertThat(resp.frameLength()).isEqualTo(resp.content().readableBytes());
                assertThat(resp.codec()).isEqualTo(BoltProtocol.CODEC_HESSIAN2);
                BoltFrame back = BoltFrameTest.decode(Wire.bytesOf(resp.content()));
                assertThat(back.status()).isEqualTo(status);
                assertThat(back.framing()).isEqualTo(framing);
                back.release();
                resp.release();
            }
        }
    }

    @Test
    void messageIsSanitisedAndCapped() {
        BoltFrame resp = BoltFrames.errorResponse(ALLOC, BoltFraming.V1, 1, BoltStatus.ERROR, "é\n");
        assertThat(resp.contentBytes().toString(StandardCharsets.US_ASCII)).isEqualTo("\u0002??");
        resp.release();
        resp = BoltFrames.errorResponse(ALLOC, BoltFraming.V1, 1, BoltStatus.ERROR, null);
        assertThat(resp.contentBytes().toString(StandardCharsets.US_ASCII)).isEqualTo("\u0005ERROR");
        resp.release();
        resp = BoltFrames.errorResponse(ALLOC, BoltFraming.V1, 1, BoltStatus.ERROR, "z".repeat(5000));
        assertThat(resp.contentLength()).isEqualTo(3 + BoltFrames.MAX_MESSAGE_LENGTH);
        resp.release();
    }

    @Test
    void onlyDefinedErrorStatusesAreAccepted() {
        for (int status : new int[] {BoltStatus.SUCCESS, 0x0a, 0x0f, 0x13, -1, 0x10000}) {
            assertThatThrownBy(() -> BoltFrames.errorResponse(ALLOC, BoltFraming.V1, 1, status, "m"))
                    .isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(definedErrorStatuses()).hasSize(12);
    }

    @Test
    void onewayAndResponsesAreNotAnswered() {
        BoltFrame oneway = BoltFrameTest.decode(V1_ONEWAY);
        assertThatThrownBy(() -> BoltFrames.errorResponse(ALLOC, oneway, BoltStatus.TIMEOUT, "m"))
                .isInstanceOf(IllegalArgumentException.class);
        oneway.release();
    }

    @Test
    void codecErrorResponseAnswersInTheClientsFraming() {
        byte[] bad = V2_CRC_ONEWAY.clone();
        bad[2] = 1; // make it a two-way request so the error is answerable; the CRC no longer matches
        EmbeddedChannel ch = new EmbeddedChannel(new BoltFrameDecoder());
        ch.writeInbound(Wire.buf(bad, 0, bad.length));
        BoltDecodeError err = ch.readInbound();
        assertThat(err.kind()).isEqualTo(BoltDecodeError.Kind.CRC_MISMATCH);
        assertThat(err.answerable()).isTrue();
        BoltFrame resp = BoltFrames.codecErrorResponse(ALLOC, err);
        assertThat(resp.status()).isEqualTo(BoltStatus.CODEC_EXCEPTION);
        assertThat(resp.requestId()).isEqualTo(0x7d4);
        assertThat(resp.framing()).isEqualTo(BoltFraming.V2_VER2_CRC);
        resp.release();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void requestBuilderRoundTrips() {
        Map<String, String> headers = Map.of("service", "com.alipay.test.TestService:1.0");
        var content = ALLOC.buffer().writeBytes(new byte[] {0x4f, 1, 2, 3, 4});
        BoltFrame req = BoltFrames.request(ALLOC, BoltFraming.V1, false, 1, 1, 5000, BoltProtocol.SOFA_REQUEST_CLASS,
                headers, content);
        assertThat(content.release()).isTrue();
        assertBytes(req, SOFALOAD_REQUEST);
    }

    @Test
    void encoderWritesTheFrameBytesAndReleasesTheFrame() {
        EmbeddedChannel ch = new EmbeddedChannel(BoltFrameEncoder.INSTANCE);
        BoltFrame frame = BoltFrames.heartbeat(ALLOC, BoltFraming.V1, 42);
        ch.writeOutbound(frame);
        assertThat(frame.refCnt()).isEqualTo(1); // the written buffer is the frame's own, handed on
        ByteBuf out = ch.readOutbound();
        assertThat(Wire.bytesOf(out)).isEqualTo(V1_HEARTBEAT);
        assertThat(out.release()).isTrue();
        assertThat(frame.refCnt()).isZero();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    static int[] definedErrorStatuses() {
        return IntStream.rangeClosed(0, 0xffff)
                .filter(s -> BoltStatus.isDefined(s) && s != BoltStatus.SUCCESS).toArray();
    }

    private static void assertBytes(BoltFrame frame, byte[] expected) {
        try {
            assertThat(Wire.hexOf(frame.content())).isEqualTo(ByteBufUtil.hexDump(expected));
            assertThat(frame.frameLength()).isEqualTo(expected.length);
        } finally {
            frame.release();
        }
    }
}
