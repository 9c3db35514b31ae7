package io.sluice.server.tls.upstream;

import javax.net.ssl.SSLException;

/**
 * A TLS handshake with an upstream host failed (or could not start). The message names the host,
 * the cluster and the reason in words ({@code certificate expired}); {@link #reason()} is the
 * metric tag ({@code expired}). The HTTP proxy answers 502 with the message, the Bolt proxy an
 * ERROR_COMM status with it.
 */
public final class UpstreamTlsException extends SSLException {

    private static final long serialVersionUID = 1L;

    private final String reason;

    UpstreamTlsException(String message, String reason, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    /** The failure's metric tag: one of {@link TlsFailure}'s reasons. */
    public String reason() {
        return reason;
    }

    /**
     * What a TLS error on an established upstream connection means ({@code the upstream rejected the
     * client certificate}), or null if {@code cause} is no TLS error. With TLS 1.3 a server checks the
     * client certificate after the client's handshake completed: its alert arrives as such an error.
     */
    public static String alert(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SSLException) {
                return TlsFailure.of(t, "the host").words;
            }
        }
        return null;
    }

    /** The message of {@code cause} if it is an upstream TLS failure, else null (a connect hook for the proxies). */
    public static String describe(Throwable cause) {
        return cause instanceof UpstreamTlsException e ? e.getMessage() : null;
    }
}
