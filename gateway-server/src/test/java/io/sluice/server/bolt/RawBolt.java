package io.sluice.server.bolt;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.sluice.codec.testing.Bufs;
import io.sluice.codec.bolt.BoltFrame;
import io.sluice.codec.bolt.BoltFrames;
import io.sluice.codec.bolt.BoltFraming;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** A blocking raw-socket Bolt peer for tests: writes hand-built frames, reads responses field by field. */
final class RawBolt implements AutoCloseable {

    private static final ByteBufAllocator ALLOC = Bufs.ALLOC;

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;

    RawBolt(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(10_000);
        socket.setTcpNoDelay(true);
        in = new DataInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    /** A response as read from the wire. */
    record Response(int protocol, int cmdCode, int id, int status, String className, byte[] content) {
        /** The content as text (Hessian compact strings: a length byte, then ASCII). */
        String text() {
            return new String(content, StandardCharsets.ISO_8859_1);
        }
    }

    /** The bytes of a request whose content is a Hessian2 compact string (at most 31 ASCII chars). */
    static byte[] stringRequest(BoltFraming framing, int id, String className, Map<String, String> headers, String body) {
        byte[] ascii = body.getBytes(StandardCharsets.US_ASCII);
        ByteBuf content = Bufs.heap(1 + ascii.length).writeByte(ascii.length).writeBytes(ascii);
        try {
            return bytes(BoltFrames.request(ALLOC, framing, false, id, 1, 5000, className, headers, content));
        } finally {
            content.release(); // copied by request(), not taken
        }
    }

    /** A request whose content is a Hessian2 string of up to 65535 ASCII chars ({@code 'S' len16 bytes}). */
    static byte[] longStringRequest(BoltFraming framing, int id, String body) {
        byte[] ascii = body.getBytes(StandardCharsets.US_ASCII);
        ByteBuf content = Bufs.heap(3 + ascii.length).writeByte('S').writeShort(ascii.length).writeBytes(ascii);
        try {
            return bytes(BoltFrames.request(ALLOC, framing, false, id, 1, 30_000, "java.lang.String", Map.of(), content));
        } finally {
            content.release();
        }
    }

    static byte[] heartbeat(BoltFraming framing, int id) {
        return bytes(BoltFrames.heartbeat(ALLOC, framing, id));
    }

    static byte[] bytes(BoltFrame f) {
        try {
            return ByteBufUtil.getBytes(f.content());
        } finally {
            f.release();
        }
    }

    void write(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    void shutdownOutput() throws IOException {
        socket.shutdownOutput();
    }

    /** Reads one response frame (v1 or v2, CRC trailer skipped). */
    Response read() throws IOException {
        int proto = in.readUnsignedByte();
        int ver1 = proto == 2 ? in.readUnsignedByte() : 0;
        int type = in.readUnsignedByte();
        if (type != 0) {
            throw new IOException("not a response: type " + type);
        }
        int cmd = in.readUnsignedShort();
        in.readUnsignedByte(); // ver2
        int id = in.readInt();
        in.readUnsignedByte(); // codec
        int sw = proto == 2 ? in.readUnsignedByte() : 0;
        int status = in.readUnsignedShort();
        int classLen = in.readUnsignedShort();
        int headerLen = in.readUnsignedShort();
        int contentLen = in.readInt();
        byte[] clazz = new byte[classLen];
        in.readFully(clazz);
        in.skipNBytes(headerLen);
        byte[] content = new byte[contentLen];
        in.readFully(content);
        if (proto == 2 && ver1 == 2 && (sw & 1) != 0 && cmd != 0) {
            in.readInt();
        }
        return new Response(proto, cmd, id, status, new String(clazz, StandardCharsets.UTF_8), content);
    }

    /** True if the peer closed the connection (EOF) before sending anything more. */
    boolean closedByPeer() throws IOException {
        try {
            return in.read() < 0;
        } catch (EOFException | java.net.SocketException e) {
            return true;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
