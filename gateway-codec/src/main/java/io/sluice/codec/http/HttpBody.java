package io.sluice.codec.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;

/**
 * A piece of a message body as it arrived: a retained slice of the input. In a chunked message the
 * bytes include the chunk framing (sizes, line breaks, trailers) unless the decoder was told to
 * de-chunk, so a proxy forwards them untouched; {@link #payloadBytes()} counts the data alone.
 * The last piece of every body has {@link #isLast()} set.
 */
public final class HttpBody extends DefaultByteBufHolder {

    private final boolean last;
    private final int payloadBytes;

    public HttpBody(ByteBuf content, boolean last, int payloadBytes) {
        super(content);
        this.last = last;
        this.payloadBytes = payloadBytes;
    }

    public boolean isLast() {
        return last;
    }

    /** Body data in this piece, without chunk framing. */
    public int payloadBytes() {
        return payloadBytes;
    }

    @Override
    public String toString() {
        return "HttpBody[" + content().readableBytes() + " bytes" + (last ? ", last]" : "]");
    }
}
