package io.sluice.server.transport;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/** How addresses and bind failures read in logs and error messages. */
public final class Sockets {

    private Sockets() {
    }

    /** {@code 127.0.0.1:2046}, {@code [::1]:2046}: no leading slash, no host name lookup. */
    public static String format(SocketAddress address) {
        if (address instanceof InetSocketAddress i) {
            return hostPort(i.getHostString(), i.getPort());
        }
        return String.valueOf(address);
    }

    /** {@code host:port}, IPv6 literals in brackets. */
    public static String hostPort(String host, int port) {
        return (host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host) + ":" + port;
    }

    /**
     * A bind failure as a user should read it: {@code cannot listen on 127.0.0.1:2046 (listener web):
     * Address already in use}, as a {@link BindException} (the cause kept).
     *
     * @param what {@code listener web}, {@code admin}
     */
    public static IOException bindFailure(String what, String host, int port, Throwable cause) {
        BindException e = new BindException("cannot listen on " + hostPort(host, port) + " (" + what + "): " + reason(cause));
        e.initCause(cause);
        return e;
    }

    /** Why a bind failed, without Netty's {@code bind(..) failed: } prefix ({@code Address already in use}). */
    public static String reason(Throwable cause) {
        String reason = cause == null || cause.getMessage() == null ? String.valueOf(cause) : cause.getMessage();
        int failed = reason.indexOf("failed: ");
        if (reason.startsWith("bind(") && failed > 0) { // Netty's native transports: "bind(..) failed: Address already in use"
            reason = reason.substring(failed + "failed: ".length());
        }
        int errno = reason.indexOf("failed with error(");
        if (reason.startsWith("bind(") && errno > 0 && reason.indexOf("): ", errno) > 0) { // io_uring: "...error(-98): Address..."
            reason = reason.substring(reason.indexOf("): ", errno) + 3);
        }
        return reason;
    }
}
