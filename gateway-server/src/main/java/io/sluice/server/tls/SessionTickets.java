package io.sluice.server.tls;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ssl.ReferenceCountedOpenSslEngine;
import io.netty.handler.ssl.SslHandler;

import javax.net.ssl.SSLEngine;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Sends a TLS 1.3 server's session tickets right after its handshake. BoringSSL queues the
 * NewSessionTicket messages when the handshake completes and writes them out only with the next
 * {@code SSL_write} (so that a client that never reads cannot block a server with a small write
 * buffer); its documented way to send them without application data is a zero-byte write. Without
 * it the tickets left with the first response: a connection closed before any response gave its
 * client nothing to resume with, and a client that keeps Nagle on (ab) sent its request only after
 * the gateway's delayed ACK of its Finished (about 40 ms per new connection), as nothing else
 * carried the ACK. TLS 1.2 tickets are part of the handshake flight and need none of this, nor does
 * the JDK provider (it writes tickets during the handshake).
 *
 * <p>{@link #disable} turns tickets off on a connection ({@code session_tickets: false}): Netty
 * sets {@code SSL_OP_NO_TICKET} on its contexts but clears it again on every TLS 1.3 server engine
 * (its {@code jdk.tls.server.enableSessionTicketExtension} default), so BoringSSL issued two TLS 1.3
 * tickets per full handshake under keys of its own and resumed them, tickets "off" or not.
 */
final class SessionTickets {

    /**
     * {@code io.netty.internal.tcnative.SSL.writeToSSL(long ssl, long buf, int len)}, looked up once:
     * tcnative is a runtime dependency (an embedder may leave it out; then no engine is an OpenSSL one).
     */
    private static final MethodHandle WRITE = lookup("writeToSSL", MethodType.methodType(int.class, long.class, long.class, int.class));
    private static final MethodHandle CLEAR_ERROR = lookup("clearError", MethodType.methodType(void.class));
    /** {@code io.netty.internal.tcnative.SSL.setOptions(long ssl, int options)} and {@code SSL_OP_NO_TICKET}. */
    private static final MethodHandle SET_OPTIONS = lookup("setOptions", MethodType.methodType(void.class, long.class, int.class));
    private static final int NO_TICKET = noTicket();
    private static final ByteBuffer KEEP = ByteBuffer.allocateDirect(1);
    /** Where the zero-byte write "reads" from: tcnative refuses a null address even for no bytes. */
    private static final long EMPTY = address();

    private SessionTickets() {
    }

    /** Whether tickets can be flushed (loads this class off the event loop, at a listener's start). */
    static boolean available() {
        return WRITE != null && EMPTY != 0;
    }

    private static long address() {
        try {
            Class<?> buffer = Class.forName("io.netty.internal.tcnative.Buffer", true, SessionTickets.class.getClassLoader());
            MethodHandle address = MethodHandles.publicLookup().findStatic(buffer, "address",
                    MethodType.methodType(long.class, ByteBuffer.class));
            return (long) address.invokeExact(KEEP);
        } catch (Throwable e) {
            return 0; // tcnative absent or not loadable: no OpenSSL engines either
        }
    }

    private static MethodHandle lookup(String name, MethodType type) {
        try {
            Class<?> ssl = Class.forName("io.netty.internal.tcnative.SSL", false, SessionTickets.class.getClassLoader());
            return MethodHandles.publicLookup().findStatic(ssl, name, type);
        } catch (ReflectiveOperationException | LinkageError e) {
            return null;
        }
    }

    /**
     * After a successful handshake on {@code ssl}: a zero-byte {@code SSL_write} (BoringSSL moves
     * the queued tickets into the engine's network buffer) and a flush through the SSL handler,
     * whose empty wrap drains that buffer to the socket. {@code ctx} is a handler behind {@code ssl}.
     */
    static void flush(ChannelHandlerContext ctx, SslHandler ssl) {
        if (WRITE == null || EMPTY == 0 || !(ssl.engine() instanceof ReferenceCountedOpenSslEngine engine)) {
            return;
        }
        synchronized (engine) { // the engine's own methods hold this lock around SSL_* calls
            long p = engine.sslPointer();
            if (p == 0 || engine.isOutboundDone()) {
                return;
            }
            try {
                int n = (int) WRITE.invokeExact(p, EMPTY, 0);
                if (n < 0) {
                    CLEAR_ERROR.invokeExact(); // nothing was written; the next write reports a real failure
                }
            } catch (Throwable t) {
                return; // the tickets leave with the first response, as without this
            }
        }
        ctx.flush();
    }

    /**
     * No session tickets on {@code engine}'s connection, in any TLS version: sets
     * {@code SSL_OP_NO_TICKET} on its {@code SSL} again after Netty cleared it for TLS 1.3 (the
     * context-wide way, {@code SSL_CTX_set_num_tickets}, is not in tcnative's BoringSSL build). One
     * native call per connection, made only on listeners with {@code session_tickets: false}; a
     * no-op on a JDK engine.
     *
     * @return false when the engine is an OpenSSL one and tickets could not be turned off
     */
    static boolean disable(SSLEngine engine) {
        if (!(engine instanceof ReferenceCountedOpenSslEngine openssl)) {
            return true;
        }
        if (SET_OPTIONS == null || NO_TICKET == 0) {
            return false;
        }
        synchronized (openssl) { // the engine's own methods hold this lock around SSL_* calls
            long p = openssl.sslPointer();
            if (p == 0) {
                return false;
            }
            try {
                SET_OPTIONS.invokeExact(p, NO_TICKET);
                return true;
            } catch (Throwable t) {
                return false;
            }
        }
    }

    /** Whether {@link #disable} works here (loads this class off the event loop, at a listener's start). */
    static boolean canDisable() {
        return SET_OPTIONS != null && NO_TICKET != 0;
    }

    private static int noTicket() {
        try {
            Class<?> ssl = Class.forName("io.netty.internal.tcnative.SSL", false, SessionTickets.class.getClassLoader());
            return ssl.getField("SSL_OP_NO_TICKET").getInt(null);
        } catch (ReflectiveOperationException | LinkageError e) {
            return 0;
        }
    }
}
