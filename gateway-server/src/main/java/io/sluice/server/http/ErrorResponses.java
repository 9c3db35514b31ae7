package io.sluice.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpResponseStatus;

import java.nio.charset.StandardCharsets;

/** The gateway's own responses: a status and one short line saying why, as text/plain. */
final class ErrorResponses {

    /** The interim response that invites a request body. */
    static final ByteBuf CONTINUE = Unpooled.unreleasableBuffer(Unpooled.directBuffer(25)
            .writeBytes("HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII))).asReadOnly();

    private ErrorResponses() {
    }

    /** A complete response, encoded; the caller owns (writes or releases) it. */
    static ByteBuf of(ByteBufAllocator alloc, HttpResponseStatus status, String reason, boolean keepAlive) {
        return of(alloc, status, reason, keepAlive, null);
    }

    /** Same, with {@code extraHeaders} (CRLF-terminated lines, or null) after the standard ones. */
    static ByteBuf of(ByteBufAllocator alloc, HttpResponseStatus status, String reason, boolean keepAlive, String extraHeaders) {
        byte[] text = (status.code() + " " + status.reasonPhrase() + ": " + reason + "\n").getBytes(StandardCharsets.UTF_8);
        String head = "HTTP/1.1 " + status.code() + " " + status.reasonPhrase() + "\r\n"
                + "content-type: text/plain\r\n"
                + "content-length: " + text.length + "\r\n"
                + "server: sluice\r\n"
                + "connection: " + (keepAlive ? "keep-alive" : "close") + "\r\n"
                + (extraHeaders == null ? "" : extraHeaders) + "\r\n";
        ByteBuf buf = alloc.buffer(head.length() + text.length);
        ByteBufUtil.writeAscii(buf, head);
        return buf.writeBytes(text);
    }

    /**
     * A 503 the gateway sheds because a circuit breaker is at its limit: marked with
     * {@code x-sluice-overloaded: true} so clients and proxies in front can tell it from an upstream's 503.
     */
    static ByteBuf overloaded(ByteBufAllocator alloc, String reason, boolean keepAlive) {
        byte[] text = ("503 Service Unavailable: " + reason + "\n").getBytes(StandardCharsets.UTF_8);
        String head = "HTTP/1.1 503 Service Unavailable\r\n"
                + "content-type: text/plain\r\n"
                + "content-length: " + text.length + "\r\n"
                + "x-sluice-overloaded: true\r\n"
                + "server: sluice\r\n"
                + "connection: " + (keepAlive ? "keep-alive" : "close") + "\r\n\r\n";
        ByteBuf buf = alloc.buffer(head.length() + text.length);
        ByteBufUtil.writeAscii(buf, head);
        return buf.writeBytes(text);
    }

    /** The 100 Continue response, shared (writing it never releases it). */
    static ByteBuf continueResponse() {
        return CONTINUE.duplicate();
    }
}
