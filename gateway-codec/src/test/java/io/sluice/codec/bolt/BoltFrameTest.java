package io.sluice.codec.bolt;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.codec.testing.Bufs;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.CRC32;

import static io.sluice.codec.bolt.BoltGolden.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BoltFrameTest {

    @Test
    void rewriteRequestIdV1InPlace() {
        BoltFrame f = decode(V1_REQUEST);
        f.rewriteRequestId(0x01020304);
        assertThat(f.requestId()).isEqualTo(0x01020304);
        byte[] expected = V1_REQUEST.clone();
        expected[5] = 1;
        expected[6] = 2;
        expected[7] = 3;
        expected[8] = 4;
        assertThat(Wire.bytesOf(f.content())).isEqualTo(expected);
        f.rewriteRequestId(7);
        assertThat(Wire.bytesOf(f.content())).isEqualTo(V1_REQUEST);
        f.release();
    }

    @Test
    void rewriteRequestIdV2WithoutCrc() {
        BoltFrame f = decode(V2_HEARTBEAT);
        f.rewriteRequestId(-5);
        assertThat(f.requestId()).isEqualTo(-5);
        assertThat(f.content().getInt(f.content().readerIndex() + 6)).isEqualTo(-5);
        assertThat(f.frameLength()).isEqualTo(V2_HEARTBEAT.length);
        f.release();
    }

    @Test
    void rewriteRequestIdV2RecomputesCrcAndTheResultStillDecodes() {
        BoltFrame f = decode(V2_CRC_ONEWAY);
        f.rewriteRequestId(99);
        byte[] rewritten = Wire.bytesOf(f.content());
        CRC32 crc = new CRC32();
        crc.update(rewritten, 0, rewritten.length - 4);
        assertThat(f.content().getInt(f.content().readerIndex() + rewritten.length - 4)).isEqualTo((int) crc.getValue());

        BoltFrame again = decode(rewritten); // the decoder verifies the new CRC
        assertThat(again.requestId()).isEqualTo(99);
        again.release();

        f.rewriteRequestId(0x7d4); // back to the original: byte-identical to the capture, CRC included
        assertThat(Wire.bytesOf(f.content())).isEqualTo(V2_CRC_ONEWAY);
        f.release();
    }

    @Test
    void rewriteWorksOnAHeapCopyAndOnAFrameInsideALargerBuffer() {
        BoltFrame f = decode(V2_CRC_ONEWAY);
        BoltFrame heap = f.replace(Bufs.copied(V2_CRC_ONEWAY));
        heap.rewriteRequestId(1234);
        f.rewriteRequestId(1234);
        assertThat(Wire.bytesOf(heap.content())).isEqualTo(Wire.bytesOf(f.content()));
        heap.release();
        f.release();

        // two frames in one read: the second frame's slice starts mid-buffer
        EmbeddedChannel ch = new EmbeddedChannel(new BoltFrameDecoder());
        ByteBuf in = Bufs.direct(256);
        in.writeBytes(V1_ONEWAY).writeBytes(V2_CRC_ONEWAY);
        ch.writeInbound(in);
        BoltFrame first = ch.readInbound();
        BoltFrame second = ch.readInbound();
        second.rewriteRequestId(77);
        BoltFrame check = decode(Wire.bytesOf(second.content()));
        assertThat(check.requestId()).isEqualTo(77);
        assertThat(Wire.bytesOf(first.content())).isEqualTo(V1_ONEWAY);
        check.release();
        first.release();
        second.release();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void routingKeysAreFoundInPlace() {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("service", "com.foo.HelloService:1.0");
        headers.put("sofa_head_method_name", "sayHello");
        headers.put("sofa_head_target_service", "com.foo.HelloService:1.0:blue");
        headers.put("rpc_trace_context.sofaTraceId", "0a0fe8b61234");
        headers.put("protocol", "bolt");
        BoltFrame f = request(headers);
        assertThat(f.service()).isEqualTo("com.foo.HelloService:1.0");
        assertThat(f.methodName()).isEqualTo("sayHello");
        assertThat(f.targetService()).isEqualTo("com.foo.HelloService:1.0:blue");
        assertThat(f.header("protocol")).isEqualTo("bolt");
        assertThat(f.header("servic")).isNull();
        assertThat(f.header("service2")).isNull();
        assertThat(f.headers()).containsExactlyEntriesOf(headers);
        assertThat(f.className()).isEqualTo(BoltProtocol.SOFA_REQUEST_CLASS);
        assertThat(f.className()).isSameAs(f.className());
        f.release();
    }

    @Test
    void nullPairsAreSkippedDuplicatesLastWinsEmptyValuesKept() {
        byte[] header = Wire.of()
                .i32(-1).i32(3).ascii("abc")              // null key: skipped
                .entry("service", "first")
                .i32(7).ascii("service").i32(-1)          // null value: skipped
                .entry("empty", "")
                .entry("service", "second")
                .bytes();
        BoltFrame f = requestWithRawHeader(header);
        assertThat(f.service()).isEqualTo("second");
        assertThat(f.header("empty")).isEmpty();
        assertThat(f.headers()).containsExactly(Map.entry("service", "second"), Map.entry("empty", ""));
        f.release();
    }

    @Test
    void aRepeatedServiceValueIsRecognisedNotDecodedAgain() {
        BoltFrame f = request(Map.of("service", "com.foo.HelloService:1.0"));
        String previous = new String("com.foo.HelloService:1.0");
        assertThat(f.service(previous)).isSameAs(previous);
        assertThat(f.service("com.foo.HelloService:2.0")).isEqualTo("com.foo.HelloService:1.0").isNotSameAs(previous);
        assertThat(f.service("com.foo.HelloService:1.")).isEqualTo("com.foo.HelloService:1.0");
        assertThat(f.service(null)).isEqualTo("com.foo.HelloService:1.0");
        f.release();

        BoltFrame utf8 = request(Map.of("service", "com.foo.Grüße:1.0"));
        String same = new String("com.foo.Grüße:1.0");
        assertThat(utf8.service(same)).as("non-ASCII values are decoded").isEqualTo(same);
        utf8.release();
        BoltFrame none = request(Map.of("protocol", "bolt"));
        assertThat(none.service(previous)).isNull();
        none.release();
    }

    @Test
    void malformedHeaderMapYieldsNullLookups() {
        byte[] overrun = Wire.of().entry("service", "x").i32(100).ascii("short").bytes();
        BoltFrame f = requestWithRawHeader(overrun);
        assertThat(f.service()).isNull();
        assertThat(f.headers()).containsExactly(Map.entry("service", "x"));
        f.release();

        byte[] negative = Wire.of().entry("service", "x").i32(-2).bytes();
        f = requestWithRawHeader(negative);
        assertThat(f.service()).isNull();
        f.release();

        byte[] trailing = Wire.of().entry("service", "x").hex("0000").bytes();
        f = requestWithRawHeader(trailing);
        assertThat(f.service()).isNull();
        f.release();
    }

    @Test
    void slicesAreViewsAndRetainedSlicesOutliveTheFrame() {
        BoltFrame f = decode(SOFALOAD_REQUEST);
        assertThat(f.classBytes().toString(StandardCharsets.US_ASCII)).isEqualTo(BoltProtocol.SOFA_REQUEST_CLASS);
        assertThat(f.headerBytes().readableBytes()).isEqualTo(46);
        ByteBuf content = f.retainedContentBytes();
        ByteBuf header = f.retainedHeaderBytes();
        ByteBuf clazz = f.retainedClassBytes();
        assertThat(f.release()).isFalse();
        assertThat(Wire.hexOf(content)).isEqualTo("4f01020304");
        assertThat(header.getInt(0)).isEqualTo(7);
        assertThat(clazz.readableBytes()).isEqualTo(44);
        assertThat(content.release()).isFalse();
        assertThat(header.release()).isFalse();
        assertThat(clazz.release()).isTrue();
        assertThat(f.refCnt()).isZero();
    }

    @Test
    void requestAndResponseOnlyAccessors() {
        BoltFrame req = decode(V1_REQUEST);
        assertThatThrownBy(req::status).isInstanceOf(IllegalStateException.class);
        assertThat(req.toString()).contains("REQUEST").contains("id=7").contains("timeout=3000");
        req.release();
        BoltFrame resp = decode(V1_RESPONSE);
        assertThatThrownBy(resp::timeoutMillis).isInstanceOf(IllegalStateException.class);
        assertThat(resp.toString()).contains("status=SUCCESS");
        resp.release();
    }

    private static BoltFrame request(Map<String, String> headers) {
        ByteBuf content = Bufs.copied(new byte[] {1, 2, 3});
        try {
            BoltFrame built = BoltFrames.request(Bufs.ALLOC, BoltFraming.V1, false, 5, 1, 3000,
                    BoltProtocol.SOFA_REQUEST_CLASS, headers, content);
            try {
                return decode(Wire.bytesOf(built.content()));
            } finally {
                built.release();
            }
        } finally {
            content.release();
        }
    }

    private static BoltFrame requestWithRawHeader(byte[] header) {
        byte[] frame = Wire.of().hex("01 01 0001 01 00000001 01 00000bb8 0000")
                .hex(String.format("%04x", header.length)).i32(0)
                .hex(ByteBufUtil.hexDump(header)).bytes();
        return decode(frame);
    }

    static BoltFrame decode(byte[] bytes) {
        EmbeddedChannel ch = new EmbeddedChannel(new BoltFrameDecoder());
        ch.writeInbound(Wire.buf(bytes, 0, bytes.length));
        Object m = ch.readInbound();
        assertThat(m).isInstanceOf(BoltFrame.class);
        assertThat(ch.finishAndReleaseAll()).isFalse();
        return (BoltFrame) m;
    }
}
