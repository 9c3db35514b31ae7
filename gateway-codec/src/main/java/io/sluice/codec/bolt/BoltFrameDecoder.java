package io.sluice.codec.bolt;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

import java.util.List;

/**
 * Splits a byte stream into {@link BoltFrame}s, v1 and v2 alike (each frame is judged by its own
 * first byte), without copying: every frame is one retained slice of the cumulation buffer.
 * Sits first in a Bolt pipeline (after TLS, if any); the next handler owns the frames it receives.
 *
 * <pre>
 * v1 request / oneway (22 B header)            v1 response (20 B header)
 * +------+------+---------+------+-----------+ +------+------+---------+------+-----------+
 * |proto | type | cmdcode | ver2 | requestId | |proto | type | cmdcode | ver2 | requestId |
 * | 0x01 | 1/2  | 0 / 1   |  1   |  int32    | | 0x01 |  0   | 0 / 2   |  1   |  int32    |
 * +------+------+---------+------+-----------+ +------+------+---------+------+-----------+
 * |codec | timeout(int32) | classLen(16) |     |codec | status(16) | classLen(16) |
 * +------+----------------+--------------+     +------+------------+--------------+
 * | headerLen(16) | contentLen(int32) |        | headerLen(16) | contentLen(int32) |
 * +---------------+-------------------+        +---------------+-------------------+
 * | class ... | header ... | content ...        | class ... | header ... | content ...
 *
 * v2 request / oneway (24 B header): proto 0x02, ver1, then as v1 with a switch byte after codec
 * +------+------+------+---------+------+-----------+------+--------+---------+-------+-------+---------+
 * |proto | ver1 | type | cmdcode | ver2 | requestId |codec | switch | timeout |clsLen |hdrLen |contLen  |
 * |  1   |  1   |  1   |   2     |  1   |    4      |  1   |   1    |    4    |  2    |  2    |   4     |
 * +------+------+------+---------+------+-----------+------+--------+---------+-------+-------+---------+
 * | class ... | header ... | content ... | crc32 (4 B, iff ver1 == 2 and switch bit 0)
 * v2 response (22 B header): the same with a 2-byte status in place of the 4-byte timeout.
 * </pre>
 *
 * <p>Lengths: class and header lengths are signed 16-bit and the content length is signed
 * 32-bit, as the Java bolt library reads them; negative values are malformed.
 *
 * <p>Peeks with absolute {@code get*} until a whole frame is buffered. As soon as the length
 * fields are readable, a frame longer than {@code maxFrameLength} is reported as
 * {@link BoltDecodeError.Kind#FRAME_TOO_LARGE} and its bytes are skipped as they arrive (never
 * buffered); decoding then resumes. Any other malformation (unknown protocol code or ver1, bad
 * type or command code, negative lengths, CRC mismatch) and a connection closed mid-frame are
 * reported as one {@link BoltDecodeError} message, after which all further input is discarded:
 * the stream is out of sync. Nothing is thrown into the pipeline.
 *
 * <p>Not sharable: it holds per-connection state.
 */
public final class BoltFrameDecoder extends ByteToMessageDecoder {

    /** Default maximum frame length: 16 MiB. */
    public static final int DEFAULT_MAX_FRAME_LENGTH = 16 * 1024 * 1024;

    private final int maxFrameLength;
    private long bytesToDiscard;
    private boolean failed;

    /** A decoder with {@link #DEFAULT_MAX_FRAME_LENGTH}. */
    public BoltFrameDecoder() {
        this(DEFAULT_MAX_FRAME_LENGTH);
    }

    /** @param maxFrameLength the largest accepted frame in bytes, header and CRC included */
    public BoltFrameDecoder(int maxFrameLength) {
        if (maxFrameLength < BoltProtocol.V2_REQUEST_HEADER_LENGTH + BoltProtocol.CRC_LENGTH) {
            throw new IllegalArgumentException("maxFrameLength too small: " + maxFrameLength);
        }
        this.maxFrameLength = maxFrameLength;
    }

    public int maxFrameLength() {
        return maxFrameLength;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (failed) {
            in.skipBytes(in.readableBytes());
            return;
        }
        if (bytesToDiscard > 0) {
            int skip = (int) Math.min(bytesToDiscard, in.readableBytes());
            in.skipBytes(skip);
            bytesToDiscard -= skip;
            return;
        }
        int readable = in.readableBytes();
        if (readable < 1) {
            return;
        }
        int start = in.readerIndex();
        int protocol = in.getUnsignedByte(start);
        int ver1 = 0;
        int typeAt;
        if (protocol == BoltProtocol.PROTOCOL_V1) {
            typeAt = 1;
        } else if (protocol == BoltProtocol.PROTOCOL_V2) {
            if (readable < 2) {
                return;
            }
            ver1 = in.getUnsignedByte(start + 1);
            if (ver1 != BoltProtocol.VER1_1 && ver1 != BoltProtocol.VER1_2) {
                fail(in, out, BoltDecodeError.Kind.UNKNOWN_VERSION, "unknown bolt v2 ver1 " + ver1);
                return;
            }
            typeAt = 2;
        } else {
            fail(in, out, BoltDecodeError.Kind.UNKNOWN_PROTOCOL, "unknown bolt protocol code 0x" + Integer.toHexString(protocol));
            return;
        }
        if (readable <= typeAt) {
            return;
        }
        int typeCode = in.getUnsignedByte(start + typeAt);
        BoltType type = BoltType.of(typeCode);
        if (type == null) {
            fail(in, out, BoltDecodeError.Kind.BAD_TYPE, "unknown bolt command type " + typeCode);
            return;
        }
        int fixedLength = BoltProtocol.headerLength(protocol, typeCode);
        if (readable < fixedLength) {
            return;
        }
        int p = start + typeAt + 1;
        int cmdCode = in.getUnsignedShort(p);
        int ver2 = in.getUnsignedByte(p + 2);
        int codec = in.getUnsignedByte(p + 7);
        p += 8;
        int switchByte = 0;
        if (protocol == BoltProtocol.PROTOCOL_V2) {
            switchByte = in.getUnsignedByte(p++);
        }
        int timeoutOrStatus;
        if (type == BoltType.RESPONSE) {
            timeoutOrStatus = in.getUnsignedShort(p);
            p += 2;
        } else {
            timeoutOrStatus = in.getInt(p);
            p += 4;
        }
        int classLength = in.getShort(p);
        int headerLength = in.getShort(p + 2);
        int contentLength = in.getInt(p + 4);

        boolean cmdOk = type == BoltType.RESPONSE
                ? cmdCode == BoltProtocol.CMD_HEARTBEAT || cmdCode == BoltProtocol.CMD_RPC_RESPONSE
                : cmdCode == BoltProtocol.CMD_HEARTBEAT || cmdCode == BoltProtocol.CMD_RPC_REQUEST;
        if (!cmdOk) {
            fail(in, out, BoltDecodeError.Kind.BAD_COMMAND_CODE, "bolt command code " + cmdCode + " invalid for " + type);
            return;
        }
        if (classLength < 0 || headerLength < 0 || contentLength < 0) {
            fail(in, out, BoltDecodeError.Kind.BAD_LENGTH, "negative bolt length: class " + classLength
                    + ", header " + headerLength + ", content " + contentLength);
            return;
        }
        boolean crc = BoltProtocol.hasCrc(protocol, ver1, switchByte);
        long frameLength = (long) fixedLength + classLength + headerLength + contentLength
                + (crc ? BoltProtocol.CRC_LENGTH : 0);
        if (frameLength > maxFrameLength) {
            out.add(error(in, start, BoltDecodeError.Kind.FRAME_TOO_LARGE,
                    "bolt frame of " + frameLength + " bytes exceeds maxFrameLength " + maxFrameLength));
            int skip = (int) Math.min(frameLength, readable);
            in.skipBytes(skip);
            bytesToDiscard = frameLength - skip;
            return;
        }
        int length = (int) frameLength;
        if (readable < length) {
            return;
        }
        if (crc) {
            int covered = length - BoltProtocol.CRC_LENGTH;
            int expected = in.getInt(start + covered);
            int actual = BoltCrc.crc32(in, start, covered);
            if (expected != actual) {
                fail(in, out, BoltDecodeError.Kind.CRC_MISMATCH, "bolt CRC32 mismatch: trailer 0x"
                        + Integer.toHexString(expected) + ", computed 0x" + Integer.toHexString(actual));
                return;
            }
        }
        ByteBuf frame = in.retainedSlice(start, length);
        in.skipBytes(length);
        out.add(new BoltFrame(frame, protocol, ver1, switchByte, type, cmdCode, ver2, codec, timeoutOrStatus,
                classLength, headerLength, contentLength));
    }

    @Override
    protected void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
        if (in.isReadable()) {
            decode(ctx, in, out);
        }
        if (in.isReadable()) {
            if (!failed && bytesToDiscard == 0) {
                fail(in, out, BoltDecodeError.Kind.TRUNCATED,
                        "connection closed inside a bolt frame (" + in.readableBytes() + " bytes buffered)");
            } else {
                in.skipBytes(in.readableBytes());
            }
        }
    }

    /** Reports a fatal error for the frame at the reader index and discards all input from now on. */
    private void fail(ByteBuf in, List<Object> out, BoltDecodeError.Kind kind, String message) {
        out.add(error(in, in.readerIndex(), kind, message));
        failed = true;
        in.skipBytes(in.readableBytes());
    }

    /** Builds an error with whatever header fields of the frame at {@code start} are readable and valid. */
    private static BoltDecodeError error(ByteBuf in, int start, BoltDecodeError.Kind kind, String message) {
        int readable = in.writerIndex() - start;
        int protocol = readable >= 1 ? in.getUnsignedByte(start) : -1;
        int ver1 = 0;
        int switchByte = 0;
        BoltType type = null;
        int requestId = 0;
        boolean hasRequestId = false;
        if (protocol == BoltProtocol.PROTOCOL_V1 || protocol == BoltProtocol.PROTOCOL_V2) {
            boolean v2 = protocol == BoltProtocol.PROTOCOL_V2;
            if (v2 && readable >= 2) {
                ver1 = in.getUnsignedByte(start + 1);
            }
            int typeAt = v2 ? 2 : 1;
            if (readable > typeAt) {
                type = BoltType.of(in.getUnsignedByte(start + typeAt));
            }
            int idAt = v2 ? BoltProtocol.V2_REQUEST_ID_OFFSET : BoltProtocol.V1_REQUEST_ID_OFFSET;
            if (readable >= idAt + 4) {
                requestId = in.getInt(start + idAt);
                hasRequestId = true;
            }
            if (v2 && readable >= 12) {
                switchByte = in.getUnsignedByte(start + 11);
            }
        }
        return new BoltDecodeError(kind, message, protocol, ver1, switchByte, type, requestId, hasRequestId);
    }
}
