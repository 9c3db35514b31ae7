package io.sluice.bench.bolt;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.sluice.codec.bolt.BoltFrame;
import io.sluice.codec.bolt.BoltFrames;
import io.sluice.codec.bolt.BoltFraming;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The request sofaload sends, rebuilt: a v1 Bolt request, codec Hessian2, timeout 5000 ms, class
 * {@code com.alipay.sofa.rpc.core.request.SofaRequest}, header {@code service:
 * com.alipay.test.TestService:1.0}, and a Hessian2 body holding a SofaRequest for
 * {@code echoStr(String)} followed by one string argument of 1098 digits (as captured on the wire; the
 * codec tests' {@code BoltGolden.SOFALOAD_REQUEST} holds its header).
 * Built once; senders copy the bytes and patch the request id at {@link #ID_OFFSET}.
 */
public final class SofaloadRequest {

    public static final String CLASS_NAME = "com.alipay.sofa.rpc.core.request.SofaRequest";
    public static final String SERVICE = "com.alipay.test.TestService:1.0";
    public static final int TIMEOUT_MILLIS = 5000;
    /** Offset of the request id in a v1 frame. */
    public static final int ID_OFFSET = 5;

    private SofaloadRequest() {
    }

    /** The whole v1 frame with request id 0. */
    public static byte[] frame() {
        ByteBuf content = Unpooled.wrappedBuffer(content());
        BoltFrame f = BoltFrames.request(UnpooledByteBufAllocator.DEFAULT, BoltFraming.V1, false, 0, 1, TIMEOUT_MILLIS,
                CLASS_NAME, Map.of("service", SERVICE), content);
        try {
            return ByteBufUtil.getBytes(f.content());
        } finally {
            f.release();
        }
    }

    /** The Hessian2 body: a SofaRequest object, then the single String argument. */
    static byte[] content() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(1400);
        out.write('C');
        string(out, CLASS_NAME);
        out.write(0x90 + 5); // five fields
        for (String field : new String[] {"targetAppName", "methodName", "targetServiceUniqueName", "requestProps",
                "methodArgSigs"}) {
            string(out, field);
        }
        out.write(0x60); // instance of class definition 0
        out.write('N'); // targetAppName = null
        string(out, "echoStr");
        string(out, SERVICE);
        out.write('H'); // requestProps: untyped map {protocol=bolt}
        string(out, "protocol");
        string(out, "bolt");
        out.write('Z');
        out.write(0x70 + 1); // methodArgSigs: typed fixed-length list of 1
        string(out, "[string");
        string(out, "java.lang.String");
        StringBuilder digits = new StringBuilder(1098);
        for (int i = 0; i < 1098; i++) {
            digits.append((char) ('1' + (i % 10 == 9 ? -1 : i % 10)));
        }
        string(out, digits.toString());
        return out.toByteArray();
    }

    /** Hessian2 string (ASCII callers only: length in chars equals length in bytes). */
    private static void string(ByteArrayOutputStream out, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        int n = s.length();
        if (n < 32) {
            out.write(n);
        } else if (n < 1024) {
            out.write(0x30 + (n >> 8));
            out.write(n & 0xff);
        } else {
            out.write('S');
            out.write(n >> 8);
            out.write(n & 0xff);
        }
        out.write(b, 0, b.length);
    }
}
