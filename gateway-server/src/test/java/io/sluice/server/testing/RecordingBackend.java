package io.sluice.server.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A plain-socket HTTP/1.1 backend that records every request exactly as it arrived (head and body
 * bytes) and answers it with {@code 200} and those bytes as the body. It reads framing leniently,
 * like a permissive origin server: Content-Length, or chunked when Transfer-Encoding mentions it,
 * so a test sees precisely what the gateway let through. Optionally it greets each connection with
 * a banner (to play a server that does not speak HTTP).
 */
public final class RecordingBackend implements AutoCloseable {

    private final SocketServer server;
    private final List<String> requests = new CopyOnWriteArrayList<>();
    private final byte[] banner;

    public RecordingBackend() throws IOException {
        this(null);
    }

    /** A backend that writes {@code banner} on every new connection and then reads without answering. */
    public RecordingBackend(String banner) throws IOException {
        this.banner = banner == null ? null : banner.getBytes(StandardCharsets.ISO_8859_1);
        server = new SocketServer("recording-backend", 200, (socket, index) -> serve(socket));
    }

    public int port() {
        return server.port();
    }

    /** The requests received so far, each as ISO-8859-1 text of its exact bytes. */
    public List<String> requests() {
        return List.copyOf(requests);
    }

    /** The last request received (fails if none). */
    public String last() {
        return requests.get(requests.size() - 1);
    }

    private void serve(Socket s) {
        try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
            if (banner != null) {
                out.write(banner);
                out.flush();
                while (in.read() >= 0) {
                    // a server that does not speak HTTP: it reads and never answers
                }
                return;
            }
            while (true) {
                ByteArrayOutputStream req = new ByteArrayOutputStream();
                String head = readHead(in, req);
                if (head == null) {
                    return;
                }
                String lower = head.toLowerCase(Locale.ROOT);
                if (lower.contains("\ntransfer-encoding:") && lower.contains("chunked")) {
                    readChunked(in, req);
                } else {
                    int cl = lower.indexOf("\ncontent-length:");
                    if (cl >= 0) {
                        int end = lower.indexOf('\n', cl + 1);
                        String v = head.substring(cl + 16, end).trim();
                        req.write(in.readNBytes(Integer.parseInt(v.split(",")[0].trim())));
                    }
                }
                byte[] bytes = req.toByteArray();
                requests.add(new String(bytes, StandardCharsets.ISO_8859_1));
                out.write(("HTTP/1.1 200 OK\r\nContent-Length: " + bytes.length + "\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                out.write(bytes);
                out.flush();
            }
        } catch (IOException | RuntimeException e) {
            // the gateway closed the connection, or sent something this lenient reader gives up on
        }
    }

    private static String readHead(InputStream in, ByteArrayOutputStream req) throws IOException {
        int last4 = 0;
        int b;
        while ((b = in.read()) >= 0) {
            req.write(b);
            last4 = last4 << 8 | b;
            if (last4 == 0x0d0a0d0a || (last4 & 0xffff) == 0x0a0a) {
                return req.toString(StandardCharsets.ISO_8859_1);
            }
        }
        return null;
    }

    private static void readChunked(InputStream in, ByteArrayOutputStream req) throws IOException {
        while (true) {
            String line = readLine(in, req);
            int size = Integer.parseInt(line.split(";")[0].trim(), 16);
            if (size == 0) {
                while (!readLine(in, req).isEmpty()) {
                    // trailer fields
                }
                return;
            }
            req.write(in.readNBytes(size));
            readLine(in, req);
        }
    }

    private static String readLine(InputStream in, ByteArrayOutputStream req) throws IOException {
        StringBuilder sb = new StringBuilder();
        int b;
        while ((b = in.read()) >= 0) {
            req.write(b);
            if (b == '\n') {
                break;
            }
            sb.append((char) b);
        }
        if (b < 0) {
            throw new IOException("closed");
        }
        String l = sb.toString();
        return l.endsWith("\r") ? l.substring(0, l.length() - 1) : l;
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
