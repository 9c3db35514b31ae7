package io.sluice.codec.bolt;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.codec.testing.Bufs;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Test helper: golden bytes written as hex plus ASCII, and draining an EmbeddedChannel. */
final class Wire {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    static Wire of() {
        return new Wire();
    }

    /** Hex digits; whitespace ignored. */
    Wire hex(String hex) {
        String h = hex.replaceAll("\\s+", "");
        for (int i = 0; i < h.length(); i += 2) {
            out.write(Integer.parseInt(h.substring(i, i + 2), 16));
        }
        return this;
    }

    Wire ascii(String s) {
        out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
        return this;
    }

    Wire i32(int v) {
        out.write(v >>> 24);
        out.write(v >>> 16);
        out.write(v >>> 8);
        out.write(v);
        return this;
    }

    /** One header-map entry (int32 length-prefixed key and value). */
    Wire entry(String key, String value) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        byte[] v = value.getBytes(StandardCharsets.UTF_8);
        i32(k.length);
        out.writeBytes(k);
        i32(v.length);
        out.writeBytes(v);
        return this;
    }

    byte[] bytes() {
        return out.toByteArray();
    }

    static ByteBuf buf(byte[] bytes, int from, int to) {
        ByteBuf b = Bufs.direct(Math.max(1, to - from));
        b.writeBytes(bytes, from, to - from);
        return b;
    }

    static byte[] bytesOf(ByteBuf buf) {
        byte[] b = new byte[buf.readableBytes()];
        buf.getBytes(buf.readerIndex(), b);
        return b;
    }

    static String hexOf(ByteBuf buf) {
        return ByteBufUtil.hexDump(buf);
    }

    /** All inbound messages currently queued. */
    static List<Object> drain(EmbeddedChannel ch) {
        List<Object> all = new ArrayList<>();
        for (Object m; (m = ch.readInbound()) != null; ) {
            all.add(m);
        }
        return all;
    }

    private Wire() {
    }
}
