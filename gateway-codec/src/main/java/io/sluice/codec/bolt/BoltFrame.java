package io.sluice.codec.bolt;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * One whole Bolt frame (request, oneway, response, heartbeat or heartbeat ack, v1 or v2) whose
 * bytes are a single buffer, {@link #content()}: the fixed header, class, header, content and the
 * CRC32 trailer if any, exactly as received. Made by {@link BoltFrameDecoder} (a retained slice of
 * the input, no copy) or by {@link BoltFrames}.
 *
 * <p>The fixed header fields are parsed once; the request id is read from the bytes so that
 * {@link #rewriteRequestId(int)} (in place, CRC recomputed) is all a proxy needs before it writes
 * the same frame upstream. Class, header and content are offered as slices of {@link #content()};
 * the routing keys are found by scanning the header map in place.
 *
 * <p>Ownership: a frame holds one reference to its buffer; whoever receives a frame from the
 * pipeline owns it and must write it (the encoder releases it) or {@link #release()} it. Slices
 * returned by the {@code *Bytes()} methods are views valid while the frame is; the
 * {@code retained*} variants return retained slices the caller must release.
 *
 * <p>Not thread-safe; use it on one event loop at a time.
 */
public final class BoltFrame extends DefaultByteBufHolder {

    private static final byte[] KEY_SERVICE = BoltProtocol.HEADER_SERVICE.getBytes(StandardCharsets.US_ASCII);
    private static final byte[] KEY_TARGET_SERVICE = BoltProtocol.HEADER_TARGET_SERVICE.getBytes(StandardCharsets.US_ASCII);
    private static final byte[] KEY_METHOD_NAME = BoltProtocol.HEADER_METHOD_NAME.getBytes(StandardCharsets.US_ASCII);

    private final byte protocol;
    private final byte ver1;
    private final byte switchByte;
    private final BoltType type;
    private final short cmdCode;
    private final byte ver2;
    private final byte codec;
    private final int timeoutOrStatus;
    private final int classLength;
    private final int headerLength;
    private final int contentLength;
    /** The same buffer as {@link #content()}, read without its per-call accessibility check. */
    private final ByteBuf buf;
    private String className;

    /** Takes ownership of {@code frame}, whose readable bytes are exactly one well-formed frame. */
    BoltFrame(ByteBuf frame, int protocol, int ver1, int switchByte, BoltType type, int cmdCode, int ver2,
              int codec, int timeoutOrStatus, int classLength, int headerLength, int contentLength) {
        super(frame);
        this.buf = frame;
        this.protocol = (byte) protocol;
        this.ver1 = (byte) ver1;
        this.switchByte = (byte) switchByte;
        this.type = type;
        this.cmdCode = (short) cmdCode;
        this.ver2 = (byte) ver2;
        this.codec = (byte) codec;
        this.timeoutOrStatus = timeoutOrStatus;
        this.classLength = classLength;
        this.headerLength = headerLength;
        this.contentLength = contentLength;
    }

    /** Protocol code: {@link BoltProtocol#PROTOCOL_V1} or {@link BoltProtocol#PROTOCOL_V2}. */
    public int protocol() {
        return protocol;
    }

    /** The v2 ver1 byte (1 or 2); 0 for v1 frames, which have none. */
    public int ver1() {
        return ver1;
    }

    /** The v2 switch byte (unsigned); 0 for v1 frames, which have none. */
    public int switchByte() {
        return switchByte & 0xff;
    }

    /** Whether the frame ends with a CRC32 trailer (v2, ver1 2, switch bit 0). */
    public boolean hasCrc() {
        return BoltProtocol.hasCrc(protocol, ver1, switchByte);
    }

    /** The framing to answer this frame's sender in. */
    public BoltFraming framing() {
        return BoltFraming.of(protocol, ver1, switchByte);
    }

    public BoltType type() {
        return type;
    }

    /** Command code: {@link BoltProtocol#CMD_HEARTBEAT}, {@code CMD_RPC_REQUEST} or {@code CMD_RPC_RESPONSE}. */
    public int cmdCode() {
        return cmdCode;
    }

    /** A heartbeat request or a heartbeat ack (command code 0). */
    public boolean isHeartbeat() {
        return cmdCode == BoltProtocol.CMD_HEARTBEAT;
    }

    /** Type REQUEST or ONEWAY. */
    public boolean isRequest() {
        return type != BoltType.RESPONSE;
    }

    public boolean isOneway() {
        return type == BoltType.ONEWAY;
    }

    public boolean isResponse() {
        return type == BoltType.RESPONSE;
    }

    /** The command version byte. */
    public int ver2() {
        return ver2 & 0xff;
    }

    /** The serializer id (opaque to a proxy; 1 = Hessian2). */
    public int codec() {
        return codec & 0xff;
    }

    /** The request id as currently in the bytes (after any {@link #rewriteRequestId}). */
    public int requestId() {
        return buf.getInt(buf.readerIndex() + requestIdOffset());
    }

    /** Offset of the 4 request id bytes from the frame start: 5 (v1) or 6 (v2). */
    public int requestIdOffset() {
        return protocol == BoltProtocol.PROTOCOL_V1 ? BoltProtocol.V1_REQUEST_ID_OFFSET : BoltProtocol.V2_REQUEST_ID_OFFSET;
    }

    /**
     * Overwrites the request id in place and, if the frame has a CRC32 trailer, recomputes it.
     * The frame can then be written as it is.
     */
    public void rewriteRequestId(int requestId) {
        int start = buf.readerIndex();
        buf.setInt(start + requestIdOffset(), requestId);
        if (hasCrc()) {
            int covered = frameLength() - BoltProtocol.CRC_LENGTH;
            buf.setInt(start + covered, BoltCrc.crc32(buf, start, covered));
        }
    }

    /** Request timeout in milliseconds ({@code -1} = none); requests and oneway only. */
    public int timeoutMillis() {
        if (type == BoltType.RESPONSE) {
            throw new IllegalStateException("a response has no timeout");
        }
        return timeoutOrStatus;
    }

    /** Response status (see {@link BoltStatus}); responses only. */
    public int status() {
        if (type != BoltType.RESPONSE) {
            throw new IllegalStateException("a request has no status");
        }
        return timeoutOrStatus;
    }

    /** Size of the fixed header: 22/20 (v1 request/response) or 24/22 (v2). */
    public int fixedHeaderLength() {
        return BoltProtocol.headerLength(protocol, type.code());
    }

    public int classLength() {
        return classLength;
    }

    public int headerLength() {
        return headerLength;
    }

    public int contentLength() {
        return contentLength;
    }

    /** classLength + headerLength + contentLength. */
    public int bodyLength() {
        return classLength + headerLength + contentLength;
    }

    /**
     * The frame's bytes, handing this frame's reference on: for writing the frame to a channel as
     * it is (no encoder needed, no extra reference count traffic). The frame must not be used after.
     */
    public ByteBuf takeBytes() {
        return buf;
    }

    /** Total bytes of the frame including any CRC trailer; equals {@code content().readableBytes()}. */
    public int frameLength() {
        return fixedHeaderLength() + bodyLength() + (hasCrc() ? BoltProtocol.CRC_LENGTH : 0);
    }

    /** The class name bytes as a view (not retained; valid while this frame is). */
    public ByteBuf classBytes() {
        return content().slice(classIndex(), classLength);
    }

    /** The header bytes as a view (not retained; valid while this frame is). */
    public ByteBuf headerBytes() {
        return content().slice(headerIndex(), headerLength);
    }

    /** The content bytes as a view (not retained; valid while this frame is). */
    public ByteBuf contentBytes() {
        return content().slice(contentIndex(), contentLength);
    }

    /** Returns a retained slice of the class name bytes; the caller releases it. */
    public ByteBuf retainedClassBytes() {
        return content().retainedSlice(classIndex(), classLength);
    }

    /** Returns a retained slice of the header bytes; the caller releases it. */
    public ByteBuf retainedHeaderBytes() {
        return content().retainedSlice(headerIndex(), headerLength);
    }

    /** Returns a retained slice of the content bytes; the caller releases it. */
    public ByteBuf retainedContentBytes() {
        return content().retainedSlice(contentIndex(), contentLength);
    }

    /** The class name (UTF-8), decoded on first use and cached; {@code ""} when absent. */
    public String className() {
        String name = className;
        if (name == null) {
            name = classLength == 0 ? "" : content().toString(classIndex(), classLength, StandardCharsets.UTF_8);
            className = name;
        }
        return name;
    }

    /** Header {@code service}, or {@code null}. Scans the header map in place. */
    public String service() {
        return header(KEY_SERVICE);
    }

    /**
     * Header {@code service}, or {@code null}; {@code likely} (e.g. the previous request's value on
     * this connection, may be null) is returned as is when the bytes spell it, so a repeated value
     * is not decoded again.
     */
    public String service(String likely) {
        return headerLength == 0 ? null : BoltHeaders.find(buf, headerIndex(), headerLength, KEY_SERVICE, likely);
    }

    /** Header {@code sofa_head_target_service}, or {@code null}. */
    public String targetService() {
        return header(KEY_TARGET_SERVICE);
    }

    /** Header {@code sofa_head_method_name}, or {@code null}. */
    public String methodName() {
        return header(KEY_METHOD_NAME);
    }

    /** Any header value by key, or {@code null} (absent, or the header is not a well-formed map). */
    public String header(String key) {
        return header(key.getBytes(StandardCharsets.UTF_8));
    }

    /** The value of {@code key} (UTF-8 bytes), or null. */
    public String header(byte[] key) {
        return headerLength == 0 ? null : BoltHeaders.find(buf, headerIndex(), headerLength, key);
    }

    /** The whole header map, decoded (for tests and admin views, not the data path). */
    public Map<String, String> headers() {
        return BoltHeaders.decode(content(), headerIndex(), headerLength);
    }

    private int classIndex() {
        return buf.readerIndex() + fixedHeaderLength();
    }

    private int headerIndex() {
        return classIndex() + classLength;
    }

    private int contentIndex() {
        return headerIndex() + headerLength;
    }

    @Override
    public BoltFrame copy() {
        return replace(content().copy());
    }

    @Override
    public BoltFrame duplicate() {
        return replace(content().duplicate());
    }

    @Override
    public BoltFrame retainedDuplicate() {
        return replace(content().retainedDuplicate());
    }

    /** Takes ownership of {@code content}, which must hold the same frame layout. */
    @Override
    public BoltFrame replace(ByteBuf content) {
        return new BoltFrame(content, protocol, ver1, switchByte, type, cmdCode, ver2, codec, timeoutOrStatus,
                classLength, headerLength, contentLength);
    }

    @Override
    public BoltFrame retain() {
        super.retain();
        return this;
    }

    @Override
    public BoltFrame retain(int increment) {
        super.retain(increment);
        return this;
    }

    @Override
    public BoltFrame touch() {
        super.touch();
        return this;
    }

    @Override
    public BoltFrame touch(Object hint) {
        super.touch(hint);
        return this;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(96).append("BoltFrame(v").append(protocol);
        if (protocol == BoltProtocol.PROTOCOL_V2) {
            sb.append('.').append(ver1).append(hasCrc() ? "+crc" : "");
        }
        sb.append(' ').append(type).append(" cmd=").append(cmdCode);
        if (refCnt() > 0) {
            sb.append(" id=").append(requestId());
        }
        if (type == BoltType.RESPONSE) {
            sb.append(" status=").append(BoltStatus.name(timeoutOrStatus));
        } else {
            sb.append(" timeout=").append(timeoutOrStatus);
        }
        return sb.append(" class=").append(classLength).append(" header=").append(headerLength)
                .append(" content=").append(contentLength).append(')').toString();
    }
}
