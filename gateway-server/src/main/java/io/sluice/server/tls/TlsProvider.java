package io.sluice.server.tls;

import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TLS implementation of downstream listeners, chosen once per JVM: OpenSSL (BoringSSL from
 * netty-tcnative-boringssl-static) when it loads, the JDK's SSLEngine otherwise. The choice is
 * logged once and shown on {@code /certs} and as the {@code sluice_tls_provider} gauge.
 * {@code -Dio.netty.handler.ssl.noOpenSsl=true} forces the JDK provider.
 */
public final class TlsProvider {

    private static final Logger log = LoggerFactory.getLogger(TlsProvider.class);
    private static volatile boolean logged;

    private TlsProvider() {
    }

    /**
     * The provider server contexts are built with. With the JDK provider, client-initiated
     * renegotiation is refused JVM-wide ({@code jdk.tls.rejectClientInitiatedRenegotiation=true},
     * unless already set; BoringSSL refuses it anyway): the JDK reads it once, before its first server
     * handshake.
     */
    public static SslProvider provider() {
        SslProvider p = OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
        if (p == SslProvider.JDK && System.getProperty("jdk.tls.rejectClientInitiatedRenegotiation") == null) {
            System.setProperty("jdk.tls.rejectClientInitiatedRenegotiation", "true");
        }
        if (!logged) {
            logged = true;
            log.info("TLS provider: {}", describe());
        }
        return p;
    }

    /** "openssl" or "jdk". */
    public static String name() {
        return OpenSsl.isAvailable() ? "openssl" : "jdk";
    }

    /** The provider and its version, or why OpenSSL did not load. */
    public static String describe() {
        if (OpenSsl.isAvailable()) {
            return "openssl (" + OpenSsl.versionString() + ")";
        }
        Throwable why = OpenSsl.unavailabilityCause();
        return "jdk (OpenSSL unavailable: " + (why == null ? "unknown" : why.getMessage()) + ")";
    }
}
