package io.sluice.server.policy.retry;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;

/**
 * The {@code x-sluice-attempt} request header (like Envoy's {@code x-envoy-attempt-count}): 1 on
 * the first try, +1 per retry. Retries always carry it; first tries only when the policy says
 * {@code include_attempt_count} (adding it copies the head once).
 */
public final class AttemptHeader {

    public static final String NAME = "x-sluice-attempt";

    private AttemptHeader() {
    }

    /**
     * Returns {@code head} (an encoded HTTP/1.1 request head ending in an empty line) with the
     * header added before that line. Takes ownership of {@code head}; the caller owns the result.
     */
    public static ByteBuf add(ByteBufAllocator alloc, ByteBuf head, int attempt) {
        int len = head.readableBytes();
        ByteBuf out = alloc.directBuffer(len + NAME.length() + 16);
        out.writeBytes(head, head.readerIndex(), len - 2);
        ByteBufUtil.writeAscii(out, NAME);
        out.writeByte(':').writeByte(' ');
        ByteBufUtil.writeAscii(out, Integer.toString(attempt));
        out.writeByte('\r').writeByte('\n').writeByte('\r').writeByte('\n');
        head.release();
        return out;
    }
}
