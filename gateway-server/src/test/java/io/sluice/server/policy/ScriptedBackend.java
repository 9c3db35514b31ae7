package io.sluice.server.policy;

import io.sluice.server.testing.SocketServer;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;

/**
 * A keep-alive HTTP/1.1 backend on a real loopback socket whose every answer is scripted: per
 * request (its index on the connection and overall) it answers with the CRC-32 of the body it read,
 * answers with a given status, resets the connection (RST), or holds the request until released.
 * Counts requests, requests in flight (and their peak) and the requests that carried
 * {@code x-sluice-attempt} values above 1.
 */
public final class ScriptedBackend implements AutoCloseable {

    public enum Action { ECHO_CRC, STATUS_503, RESET, HOLD_THEN_ECHO }

    @FunctionalInterface
    public interface Script {
        Action on(int indexOnConnection, int indexOverall);
    }

    public final AtomicInteger requests = new AtomicInteger();
    public final AtomicInteger resets = new AtomicInteger();
    public final AtomicInteger retriedHeaders = new AtomicInteger();
    public final AtomicInteger inFlight = new AtomicInteger();
    public final AtomicInteger peakInFlight = new AtomicInteger();
    public final CountDownLatch release = new CountDownLatch(1);
    private final Script script;
    private final SocketServer server;

    public ScriptedBackend(Script script) throws IOException {
        this.script = script;
        this.server = new SocketServer("scripted-backend", 256, (s, i) -> serve(s));
    }

    public int port() {
        return server.port();
    }

    private void serve(Socket s) throws Exception {
        InputStream in = s.getInputStream();
        OutputStream out = s.getOutputStream();
        for (int onConnection = 0; ; onConnection++) {
            String head = readHead(in);
            if (head == null) {
                return;
            }
            String lower = head.toLowerCase(Locale.ROOT);
            int overall = requests.getAndIncrement();
            if (lower.contains("\r\nx-sluice-attempt: ") && !lower.contains("\r\nx-sluice-attempt: 1\r\n")) {
                retriedHeaders.incrementAndGet();
            }
            int length = 0;
            int at = lower.indexOf("\r\ncontent-length:");
            if (at >= 0) {
                length = Integer.parseInt(lower.substring(at + 17, lower.indexOf('\r', at + 17)).trim());
            }
            byte[] body = in.readNBytes(length);
            int now = inFlight.incrementAndGet();
            peakInFlight.accumulateAndGet(now, Math::max);
            try {
                Action a = script.on(onConnection, overall);
                switch (a) {
                    case RESET -> {
                        resets.incrementAndGet();
                        s.setSoLinger(true, 0);
                        s.close();
                        return;
                    }
                    case STATUS_503 -> write(out, 503, "busy");
                    case HOLD_THEN_ECHO -> {
                        release.await(30, TimeUnit.SECONDS);
                        write(out, 200, crc(body));
                    }
                    case ECHO_CRC -> write(out, 200, crc(body));
                }
            } finally {
                inFlight.decrementAndGet();
            }
        }
    }

    public static String crc(byte[] body) {
        CRC32 c = new CRC32();
        c.update(body);
        return body.length + ":" + Long.toHexString(c.getValue());
    }

    private static void write(OutputStream out, int status, String text) throws IOException {
        byte[] b = text.getBytes(StandardCharsets.US_ASCII);
        out.write(("HTTP/1.1 " + status + (status == 200 ? " OK" : " Service Unavailable") + "\r\nContent-Length: "
                + b.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(b);
        out.flush();
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int last4 = 0;
        int b;
        while ((b = in.read()) >= 0) {
            head.write(b);
            last4 = last4 << 8 | b;
            if (last4 == 0x0d0a0d0a) {
                return head.toString(StandardCharsets.ISO_8859_1);
            }
        }
        return null;
    }

    @Override
    public void close() throws IOException {
        release.countDown();
        server.close();
    }
}
