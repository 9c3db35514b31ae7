package io.sluice.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;

import java.nio.charset.StandardCharsets;

/** The gateway's own responses: a status and one short line saying why, as text/plain. */
final class ErrorResponses {

    private static final String SERVER = "sluice";

    private ErrorResponses() {
    }

    /** A complete response; the caller owns (writes or releases) it. */
    static FullHttpResponse of(ByteBufAllocator alloc, HttpResponseStatus status, String reason, boolean keepAlive) {
        byte[] text = (status.code() + " " + status.reasonPhrase() + ": " + reason + "\n").getBytes(StandardCharsets.UTF_8);
        ByteBuf body = alloc.buffer(text.length).writeBytes(text);
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body);
        r.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.TEXT_PLAIN)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, text.length)
                .set(HttpHeaderNames.SERVER, SERVER)
                .set(HttpHeaderNames.CONNECTION, keepAlive ? HttpHeaderValues.KEEP_ALIVE : HttpHeaderValues.CLOSE);
        return r;
    }
}
