package io.sluice.server.http2;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/**
 * HTTP/2 frames built by hand over a plain socket, for what a well-behaved client library refuses
 * to send (upper-case names, connection-specific fields, floods). HPACK blocks use literal fields
 * without indexing and without Huffman coding; responses are read as frames, not decoded.
 */
final class RawH2 implements AutoCloseable {

    static final int DATA = 0;
    static final int HEADERS = 1;
    static final int RST_STREAM = 3;
    static final int SETTINGS = 4;
    static final int PING = 6;
    static final int GOAWAY = 7;
    static final int WINDOW_UPDATE = 8;
    static final int CONTINUATION = 9;

    static final int END_STREAM = 0x1;
    static final int END_HEADERS = 0x4;

    record Frame(int type, int flags, int stream, byte[] payload) {
        int errorCode() {
            int off = type == GOAWAY ? 4 : 0;
            return ((payload[off] & 0xFF) << 24) | ((payload[off + 1] & 0xFF) << 16) | ((payload[off + 2] & 0xFF) << 8)
                    | (payload[off + 3] & 0xFF);
        }
    }

    private final io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder hpack =
            new io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder(false);
    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;

    RawH2(int port) throws IOException {
        this(port, 0);
    }

    /** @param receiveBuffer the socket's receive buffer (0: the system's) */
    RawH2(int port, int receiveBuffer) throws IOException {
        socket = new Socket();
        if (receiveBuffer > 0) {
            socket.setReceiveBufferSize(receiveBuffer);
        }
        socket.connect(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        socket.setSoTimeout(10_000);
        socket.setTcpNoDelay(true);
        out = socket.getOutputStream();
        in = new DataInputStream(socket.getInputStream());
        out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        frame(SETTINGS, 0, 0, new byte[0]);
        out.flush();
    }

    Socket socket() {
        return socket;
    }

    void frame(int type, int flags, int stream, byte[] payload) throws IOException {
        byte[] h = {(byte) (payload.length >>> 16), (byte) (payload.length >>> 8), (byte) payload.length, (byte) type,
                (byte) flags, (byte) (stream >>> 24), (byte) (stream >>> 16), (byte) (stream >>> 8), (byte) stream};
        out.write(h);
        out.write(payload);
    }

    void flush() throws IOException {
        out.flush();
    }

    /** An HPACK block of literal fields (name, value, name, value…). */
    static byte[] block(String... nameValues) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int i = 0; i < nameValues.length; i += 2) {
            b.write(0x00); // literal without indexing, new name
            string(b, nameValues[i]);
            string(b, nameValues[i + 1]);
        }
        return b.toByteArray();
    }

    private static void string(ByteArrayOutputStream b, String s) {
        byte[] v = s.getBytes(StandardCharsets.ISO_8859_1);
        int n = v.length;
        if (n < 127) {
            b.write(n);
        } else {
            b.write(127);
            n -= 127;
            while (n >= 128) {
                b.write((n & 0x7F) | 0x80);
                n >>>= 7;
            }
            b.write(n);
        }
        b.writeBytes(v);
    }

    static String[] get(String path, String... more) {
        String[] base = {":method", "GET", ":scheme", "http", ":authority", "localhost", ":path", path};
        String[] all = new String[base.length + more.length];
        System.arraycopy(base, 0, all, 0, base.length);
        System.arraycopy(more, 0, all, base.length, more.length);
        return all;
    }

    void headers(int stream, boolean endStream, String... nameValues) throws IOException {
        frame(HEADERS, END_HEADERS | (endStream ? END_STREAM : 0), stream, block(nameValues));
        out.flush();
    }

    void rst(int stream, int code) throws IOException {
        frame(RST_STREAM, 0, stream, new byte[] {(byte) (code >>> 24), (byte) (code >>> 16), (byte) (code >>> 8), (byte) code});
    }

    /** The next frame, or null at end of stream (or a reset connection). */
    Frame read() throws IOException {
        byte[] h = new byte[9];
        try {
            in.readFully(h);
        } catch (EOFException | java.net.SocketException e) {
            return null;
        }
        int len = ((h[0] & 0xFF) << 16) | ((h[1] & 0xFF) << 8) | (h[2] & 0xFF);
        byte[] p = new byte[len];
        in.readFully(p);
        int stream = ((h[5] & 0x7F) << 24) | ((h[6] & 0xFF) << 16) | ((h[7] & 0xFF) << 8) | (h[8] & 0xFF);
        Frame f = new Frame(h[3] & 0xFF, h[4] & 0xFF, stream, p);
        if (f.type() == HEADERS) {
            decoded = decode(p);
        }
        return f;
    }

    /** The header list of the last HEADERS frame read (the server's blocks are decoded in order). */
    io.netty.handler.codec.http2.Http2Headers decoded;

    private io.netty.handler.codec.http2.Http2Headers decode(byte[] block) throws IOException {
        io.netty.buffer.ByteBuf b = io.sluice.codec.testing.Bufs.copied(block);
        try {
            return hpack.decodeHeaders(0, b);
        } catch (io.netty.handler.codec.http2.Http2Exception e) {
            throw new IOException(e);
        } finally {
            b.release();
        }
    }

    /** Reads until a frame of {@code type} (on {@code stream}, or any stream when negative) arrives; null if the connection ends first. */
    Frame await(int type, int stream) throws IOException {
        Frame f;
        while ((f = read()) != null) {
            if (f.type() == type && (stream < 0 || f.stream() == stream)) {
                return f;
            }
        }
        return null;
    }

    /** True when the peer closed the connection (EOF) within the socket timeout. */
    boolean closedByPeer() throws IOException {
        try {
            while (read() != null) {
                // drain
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
