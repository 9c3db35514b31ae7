package io.sluice.codec.bolt;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Builds gateway-originated Bolt frames: error responses, heartbeats and heartbeat acks, and
 * requests (load tools, tests). Every method returns a new {@link BoltFrame} with one reference
 * the caller owns (write it, or release it).
 *
 * <h2>Error responses</h2>
 * Every error response carries a non-empty body (sofaload never completes a request whose
 * response body is empty): class {@code java.lang.String}, no header, and a Hessian2
 * string with the message as content, serializer id 1 (Hessian2) whatever the request's was.
 * The Java bolt {@code RpcClient} maps the status to its exception before it looks at the body
 * (TIMEOUT → {@code InvokeTimeoutException}, SERVER_THREADPOOL_BUSY →
 * {@code InvokeServerBusyException}, CODEC_EXCEPTION → {@code CodecException},
 * CONNECTION_CLOSED → {@code ConnectionClosedException}, others → {@code InvokeException}); for
 * SERVER_EXCEPTION and SERVER_(DE)SERIAL_EXCEPTION it deserializes the body with Hessian2, which
 * yields the message string (not a Throwable, so the exception has no cause) — never a decode
 * error. The frame uses the request's framing; with CRC when the request had it.
 */
public final class BoltFrames {

    /** Class name of gateway-made error bodies. */
    public static final String ERROR_BODY_CLASS = "java.lang.String";
    /** Longest message put into an error body; longer ones are cut. */
    public static final int MAX_MESSAGE_LENGTH = 1024;

    private static final byte[] ERROR_BODY_CLASS_BYTES = ERROR_BODY_CLASS.getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EMPTY = new byte[0];

    private BoltFrames() {
    }

    /**
     * An error response to {@code request} in its framing, with its request id as it is now.
     *
     * @param status a defined status other than SUCCESS ({@link BoltStatus})
     * @param message detail for the body; non-ASCII characters are replaced by '?'
     * @throws IllegalArgumentException for a response or oneway {@code request} or a bad status
     */
    public static BoltFrame errorResponse(ByteBufAllocator alloc, BoltFrame request, int status, String message) {
        if (request.type() != BoltType.REQUEST) {
            throw new IllegalArgumentException("only two-way requests are answered: " + request);
        }
        return errorResponse(alloc, request.framing(), request.requestId(), status, message);
    }

    /**
     * A {@link BoltStatus#CODEC_EXCEPTION} response to the frame a decode error was about.
     *
     * @throws IllegalArgumentException unless {@link BoltDecodeError#answerable()}
     */
    public static BoltFrame codecErrorResponse(ByteBufAllocator alloc, BoltDecodeError error) {
        if (!error.answerable()) {
            throw new IllegalArgumentException("decode error cannot be answered: " + error);
        }
        return errorResponse(alloc, error.framing(), error.requestId(), BoltStatus.CODEC_EXCEPTION, error.message());
    }

    /**
     * An error response with the given framing, id and status; see the class comment for the body.
     *
     * @param status a defined status other than SUCCESS ({@link BoltStatus})
     * @param message detail for the body ({@code null} or empty: the status name); non-ASCII
     *                characters are replaced by '?', and it is cut at {@link #MAX_MESSAGE_LENGTH}
     */
    public static BoltFrame errorResponse(ByteBufAllocator alloc, BoltFraming framing, int requestId, int status,
                                          String message) {
        if (!BoltStatus.isDefined(status) || status == BoltStatus.SUCCESS) {
            throw new IllegalArgumentException("not an error status: " + BoltStatus.name(status));
        }
        String text = message == null || message.isEmpty() ? BoltStatus.name(status) : message;
        int chars = Math.min(text.length(), MAX_MESSAGE_LENGTH);
        int contentLength = hessianStringLength(chars);
        ByteBuf buf = startFrame(alloc, framing, framing.switchByte(), BoltType.RESPONSE,
                BoltProtocol.CMD_RPC_RESPONSE, requestId, BoltProtocol.CODEC_HESSIAN2, status,
                ERROR_BODY_CLASS_BYTES.length, 0, contentLength);
        buf.writeBytes(ERROR_BODY_CLASS_BYTES);
        writeHessianAsciiString(buf, text, chars);
        return finish(buf, framing, framing.switchByte(), BoltType.RESPONSE, BoltProtocol.CMD_RPC_RESPONSE,
                BoltProtocol.CODEC_HESSIAN2, status, ERROR_BODY_CLASS_BYTES.length, 0, contentLength);
    }

    /**
     * A heartbeat request (cmdcode 0, timeout -1, no body), as the bolt client's heartbeat trigger
     * sends it: switch 0 and so no CRC even in {@link BoltFraming#V2_VER2_CRC}.
     */
    public static BoltFrame heartbeat(ByteBufAllocator alloc, BoltFraming framing, int requestId) {
        ByteBuf buf = startFrame(alloc, framing, 0, BoltType.REQUEST, BoltProtocol.CMD_HEARTBEAT, requestId,
                BoltProtocol.CODEC_HESSIAN2, BoltProtocol.NO_TIMEOUT, 0, 0, 0);
        return finish(buf, framing, 0, BoltType.REQUEST, BoltProtocol.CMD_HEARTBEAT, BoltProtocol.CODEC_HESSIAN2,
                BoltProtocol.NO_TIMEOUT, 0, 0, 0);
    }

    /**
     * The ack to a heartbeat, exactly as bolt's server writes it: status SUCCESS, the same id, no
     * body, switch 0. (Only peers that send heartbeats get acks; sofaload never does.)
     *
     * @throws IllegalArgumentException if {@code heartbeat} is not a heartbeat request
     */
    public static BoltFrame heartbeatAck(ByteBufAllocator alloc, BoltFrame heartbeat) {
        if (!heartbeat.isHeartbeat() || heartbeat.type() != BoltType.REQUEST) {
            throw new IllegalArgumentException("not a heartbeat request: " + heartbeat);
        }
        return heartbeatAck(alloc, heartbeat.framing(), heartbeat.requestId());
    }

    /** A heartbeat ack with the given framing and id (status SUCCESS, no body, switch 0). */
    public static BoltFrame heartbeatAck(ByteBufAllocator alloc, BoltFraming framing, int requestId) {
        ByteBuf buf = startFrame(alloc, framing, 0, BoltType.RESPONSE, BoltProtocol.CMD_HEARTBEAT, requestId,
                BoltProtocol.CODEC_HESSIAN2, BoltStatus.SUCCESS, 0, 0, 0);
        return finish(buf, framing, 0, BoltType.RESPONSE, BoltProtocol.CMD_HEARTBEAT, BoltProtocol.CODEC_HESSIAN2,
                BoltStatus.SUCCESS, 0, 0, 0);
    }

    /**
     * An RPC request (type REQUEST, or ONEWAY if {@code oneway}), with the framing's switch and CRC.
     *
     * @param headers encoded with {@link BoltHeaders#encode}; may be empty
     * @param content the serialized body; its readable bytes are copied, it is not released
     */
    public static BoltFrame request(ByteBufAllocator alloc, BoltFraming framing, boolean oneway, int requestId,
                                    int codec, int timeoutMillis, String className, Map<String, String> headers,
                                    ByteBuf content) {
        byte[] clazz = className == null ? EMPTY : className.getBytes(StandardCharsets.UTF_8);
        ByteBuf header = alloc.heapBuffer();
        try {
            BoltHeaders.encode(headers, header);
            checkShort("class", clazz.length);
            checkShort("header", header.readableBytes());
            BoltType type = oneway ? BoltType.ONEWAY : BoltType.REQUEST;
            ByteBuf buf = startFrame(alloc, framing, framing.switchByte(), type, BoltProtocol.CMD_RPC_REQUEST,
                    requestId, codec, timeoutMillis, clazz.length, header.readableBytes(), content.readableBytes());
            buf.writeBytes(clazz).writeBytes(header, header.readerIndex(), header.readableBytes())
                    .writeBytes(content, content.readerIndex(), content.readableBytes());
            return finish(buf, framing, framing.switchByte(), type, BoltProtocol.CMD_RPC_REQUEST, codec, timeoutMillis,
                    clazz.length, header.readableBytes(), content.readableBytes());
        } finally {
            header.release();
        }
    }

    private static void checkShort(String what, int length) {
        if (length > Short.MAX_VALUE) {
            throw new IllegalArgumentException(what + " too long for bolt: " + length + " bytes");
        }
    }

    /** Allocates the whole frame and writes the fixed header. */
    private static ByteBuf startFrame(ByteBufAllocator alloc, BoltFraming framing, int switchByte, BoltType type,
                                      int cmdCode, int requestId, int codec, int timeoutOrStatus,
                                      int classLength, int headerLength, int contentLength) {
        boolean crc = BoltProtocol.hasCrc(framing.protocol(), framing.ver1(), switchByte);
        int length = BoltProtocol.headerLength(framing.protocol(), type.code()) + classLength + headerLength
                + contentLength + (crc ? BoltProtocol.CRC_LENGTH : 0);
        ByteBuf buf = alloc.buffer(length, length);
        buf.writeByte(framing.protocol());
        if (framing.protocol() == BoltProtocol.PROTOCOL_V2) {
            buf.writeByte(framing.ver1());
        }
        buf.writeByte(type.code()).writeShort(cmdCode).writeByte(BoltProtocol.VER2).writeInt(requestId)
                .writeByte(codec);
        if (framing.protocol() == BoltProtocol.PROTOCOL_V2) {
            buf.writeByte(switchByte);
        }
        if (type == BoltType.RESPONSE) {
            buf.writeShort(timeoutOrStatus);
        } else {
            buf.writeInt(timeoutOrStatus);
        }
        return buf.writeShort(classLength).writeShort(headerLength).writeInt(contentLength);
    }

    /** Appends the CRC trailer if due and wraps the buffer (takes ownership of {@code buf}). */
    private static BoltFrame finish(ByteBuf buf, BoltFraming framing, int switchByte, BoltType type, int cmdCode,
                                    int codec, int timeoutOrStatus, int classLength, int headerLength,
                                    int contentLength) {
        if (BoltProtocol.hasCrc(framing.protocol(), framing.ver1(), switchByte)) {
            buf.writeInt(BoltCrc.crc32(buf, buf.readerIndex(), buf.readableBytes()));
        }
        return new BoltFrame(buf, framing.protocol(), framing.ver1(), switchByte, type, cmdCode, BoltProtocol.VER2,
                codec, timeoutOrStatus, classLength, headerLength, contentLength);
    }

    /** Encoded size of a Hessian2 string of {@code chars} one-byte characters. */
    private static int hessianStringLength(int chars) {
        return (chars <= 31 ? 1 : 3) + chars;
    }

    /**
     * Writes the first {@code chars} characters of {@code s} as a Hessian2 string, each non-ASCII
     * or control character replaced by '?': compact form (length byte 0x00–0x1f) up to 31
     * characters, else a final chunk {@code 'S' len16}. Both forms are read by the Hessian 2.0
     * draft and final decoders alike.
     */
    private static void writeHessianAsciiString(ByteBuf out, String s, int chars) {
        if (chars <= 31) {
            out.writeByte(chars);
        } else {
            out.writeByte('S').writeShort(chars);
        }
        for (int i = 0; i < chars; i++) {
            char c = s.charAt(i);
            out.writeByte(c >= 0x20 && c < 0x7f ? c : '?');
        }
    }
}
