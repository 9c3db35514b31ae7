package io.sluice.server.testing;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

/** Loopback ports for tests that must name one before binding it, and a check that nothing listens. */
public final class Ports {

    private Ports() {
    }

    /** A port free on 127.0.0.1 a moment ago. */
    public static int free() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** A free port other than {@code other}. */
    public static int freeExcept(int other) throws IOException {
        int p = free();
        while (p == other) {
            p = free();
        }
        return p;
    }

    /** True if a connect to 127.0.0.1:{@code port} is refused (nothing listens there). */
    public static boolean refuses(int port) {
        try (Socket s = new Socket("127.0.0.1", port)) {
            return false;
        } catch (ConnectException e) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
