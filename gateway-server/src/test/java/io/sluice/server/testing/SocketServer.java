package io.sluice.server.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback {@link ServerSocket} on a free port that serves each accepted connection on a daemon
 * thread of its own: the accept loop the scripted plain-socket backends of the tests share. The
 * handler gets the socket and the connection's index (0, 1, ... in accept order) and owns the socket.
 */
public final class SocketServer implements AutoCloseable {

    /** Serves one accepted connection. */
    @FunctionalInterface
    public interface Handler {
        void serve(Socket socket, int index) throws Exception;
    }

    private final ServerSocket server;
    private final AtomicInteger accepted = new AtomicInteger();

    public SocketServer(String name, int backlog, Handler handler) throws IOException {
        server = new ServerSocket(0, backlog, InetAddress.getLoopbackAddress());
        Thread t = new Thread(() -> acceptLoop(name, handler), name);
        t.setDaemon(true);
        t.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    /** Connections accepted so far. */
    public int accepted() {
        return accepted.get();
    }

    private void acceptLoop(String name, Handler handler) {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                int index = accepted.getAndIncrement();
                Thread t = new Thread(() -> {
                    try (s) {
                        handler.serve(s, index);
                    } catch (Exception e) {
                        // the peer went away, or the test is over: the connection ends
                    }
                }, name + "-" + index);
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    /**
     * Reads one request head, byte by byte up to its empty line (bodies are the caller's); returns
     * its request line, or null at the end of the stream.
     */
    public static String readRequestHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int last4 = 0;
        int b;
        while ((b = in.read()) >= 0) {
            head.write(b);
            last4 = last4 << 8 | b;
            if (last4 == 0x0d0a0d0a) {
                String text = head.toString(StandardCharsets.ISO_8859_1);
                return text.substring(0, text.indexOf('\r'));
            }
        }
        return null;
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
