package io.sluice.codec.bolt;

/**
 * What {@link BoltFrameDecoder} emits instead of a frame when the input is not valid Bolt. Carries
 * no buffer (nothing to release) and as much of the offending frame's header as could be read, so
 * the next handler can answer {@link BoltStatus#CODEC_EXCEPTION} in the client's framing (see
 * {@link BoltFrames#codecErrorResponse}) and then decide whether to close the connection.
 *
 * <p>Unless {@link #recoverable()}, the decoder discards all further input of the connection: the
 * stream is out of sync and the handler should close the connection after answering.
 */
public final class BoltDecodeError {

    /** The kind of malformation. */
    public enum Kind {
        /** The first byte is not a known protocol code (1 or 2). */
        UNKNOWN_PROTOCOL,
        /** A v2 frame whose ver1 is neither 1 nor 2. */
        UNKNOWN_VERSION,
        /** The command type is not 0, 1 or 2. */
        BAD_TYPE,
        /** The command code does not fit the type (requests: 0 or 1; responses: 0 or 2). */
        BAD_COMMAND_CODE,
        /** A negative class, header or content length. */
        BAD_LENGTH,
        /** The frame is longer than the decoder's maximum; the decoder skips it and goes on. */
        FRAME_TOO_LARGE,
        /** The CRC32 trailer does not match the frame. */
        CRC_MISMATCH,
        /** The connection ended in the middle of a frame. */
        TRUNCATED
    }

    private final Kind kind;
    private final String message;
    private final int protocol;
    private final int ver1;
    private final int switchByte;
    private final BoltType type;
    private final int requestId;
    private final boolean hasRequestId;

    BoltDecodeError(Kind kind, String message, int protocol, int ver1, int switchByte, BoltType type,
                    int requestId, boolean hasRequestId) {
        this.kind = kind;
        this.message = message;
        this.protocol = protocol;
        this.ver1 = ver1;
        this.switchByte = switchByte;
        this.type = type;
        this.requestId = requestId;
        this.hasRequestId = hasRequestId;
    }

    public Kind kind() {
        return kind;
    }

    /** Human-readable detail, e.g. {@code "frame of 20000022 bytes exceeds maxFrameLength 16777216"}. */
    public String message() {
        return message;
    }

    /** Whether the decoder skips just this frame and keeps decoding ({@link Kind#FRAME_TOO_LARGE}). */
    public boolean recoverable() {
        return kind == Kind.FRAME_TOO_LARGE;
    }

    /** The protocol byte as read (unsigned), or -1 if nothing could be read. */
    public int protocol() {
        return protocol;
    }

    /** The v2 ver1 byte as read, or 0 (v1, or not read). */
    public int ver1() {
        return ver1;
    }

    /** The v2 switch byte as read, or 0 (v1, or not read). */
    public int switchByte() {
        return switchByte;
    }

    /** The command type, or {@code null} if unknown or not read. */
    public BoltType type() {
        return type;
    }

    /** Whether {@link #requestId()} was read from the frame. */
    public boolean hasRequestId() {
        return hasRequestId;
    }

    /** The offending frame's request id; meaningful only if {@link #hasRequestId()}. */
    public int requestId() {
        return requestId;
    }

    /**
     * The framing to answer in, or {@code null} when the protocol code or ver1 was unknown (no
     * Bolt peer could parse an answer; just close).
     */
    public BoltFraming framing() {
        if (protocol == BoltProtocol.PROTOCOL_V1
                || (protocol == BoltProtocol.PROTOCOL_V2 && (ver1 == BoltProtocol.VER1_1 || ver1 == BoltProtocol.VER1_2))) {
            return BoltFraming.of(protocol, ver1, switchByte);
        }
        return null;
    }

    /**
     * Whether a {@link BoltStatus#CODEC_EXCEPTION} response can reach the waiting caller: the
     * framing and the request id are known and the frame was a two-way request.
     */
    public boolean answerable() {
        return hasRequestId && type == BoltType.REQUEST && framing() != null;
    }

    @Override
    public String toString() {
        return "BoltDecodeError(" + kind + ": " + message
                + (hasRequestId ? ", id=" + requestId : "") + ", protocol=" + protocol + ", ver1=" + ver1
                + ", type=" + type + ')';
    }
}
