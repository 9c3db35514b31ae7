package io.sluice.server.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/** A plain socket speaking HTTP by hand, for tests that need exact bytes on the wire. */
public final class RawClient implements AutoCloseable {

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    public RawClient(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(10_000);
        in = socket.getInputStream();
        out = socket.getOutputStream();
    }

    public RawClient send(String text) throws IOException {
        out.write(text.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        return this;
    }

    public RawClient send(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
        return this;
    }

    /** Reads one response (head plus a content-length, chunked, or close-delimited body). */
    public Response read() throws IOException {
        return read(false);
    }

    /** Reads one response to a HEAD request (no body whatever the headers say). */
    public Response readHead() throws IOException {
        return read(true);
    }

    private Response read(boolean head) throws IOException {
        String statusLine = line();
        if (statusLine == null) {
            return null;
        }
        StringBuilder headers = new StringBuilder();
        String l;
        long length = -1;
        boolean chunked = false;
        while ((l = line()) != null && !l.isEmpty()) {
            headers.append(l.toLowerCase()).append('\n');
            String lower = l.toLowerCase();
            if (lower.startsWith("content-length:")) {
                length = Long.parseLong(l.substring(15).trim());
            } else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
                chunked = true;
            }
        }
        int status = Integer.parseInt(statusLine.split(" ")[1]);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (head || status == 204 || status == 304 || status < 200) {
            // no body
        } else if (chunked) {
            long size;
            while ((size = Long.parseLong(line().trim().split(";")[0], 16)) > 0) {
                body.write(in.readNBytes((int) size));
                line();
            }
            while ((l = line()) != null && !l.isEmpty()) {
                // trailers
            }
        } else if (length >= 0) {
            body.write(in.readNBytes((int) length));
        } else {
            body.write(in.readAllBytes());
        }
        return new Response(statusLine, status, headers.toString(), body.toString(StandardCharsets.ISO_8859_1), chunked);
    }

    /** True if the server closed the connection (EOF) within the socket timeout. */
    public boolean closedByPeer() throws IOException {
        try {
            return in.read() == -1;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset
        }
    }

    public void soTimeout(int millis) throws IOException {
        socket.setSoTimeout(millis);
    }

    private String line() throws IOException {
        StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\n') {
                int n = sb.length();
                return n > 0 && sb.charAt(n - 1) == '\r' ? sb.substring(0, n - 1) : sb.toString();
            }
            sb.append((char) c);
        }
        return sb.length() == 0 ? null : sb.toString();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** A parsed response; header names are lower case. */
    public record Response(String statusLine, int status, String headers, String body, boolean chunked) {
        public boolean hasHeader(String nameColonValue) {
            return headers.contains(nameColonValue.toLowerCase());
        }
    }
}
