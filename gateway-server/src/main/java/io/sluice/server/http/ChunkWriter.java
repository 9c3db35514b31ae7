package io.sluice.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.sluice.codec.http.HttpBody;

import java.nio.charset.StandardCharsets;

/**
 * Writes a close-delimited upstream response body to an HTTP/1.1 client in chunked framing (the
 * response head said {@code Transfer-Encoding: chunked}): each non-empty part as one chunk, the
 * last chunk after the last part. Used by {@link HttpProxyHandler}; writes without flushing.
 */
final class ChunkWriter {

    private static final ByteBuf LAST_CHUNK = Unpooled.unreleasableBuffer(Unpooled.directBuffer(5)
            .writeBytes("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
    private static final ByteBuf CRLF = Unpooled.unreleasableBuffer(Unpooled.directBuffer(2)
            .writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII)));

    private ChunkWriter() {
    }

    /** Writes {@code b} as a chunk (takes ownership: written or released), then the last chunk if it is the last part. */
    static void write(ChannelHandlerContext ctx, HttpBody b) {
        int n = b.content().readableBytes();
        boolean last = b.isLast();
        if (n > 0) {
            ctx.write(Unpooled.wrappedBuffer((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII)),
                    ctx.voidPromise());
            ctx.write(b.content(), ctx.voidPromise());
            ctx.write(CRLF.duplicate(), ctx.voidPromise());
        } else {
            b.release();
        }
        if (last) {
            ctx.write(LAST_CHUNK.duplicate(), ctx.voidPromise());
        }
    }
}
