package io.sluice.server.tls;

import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.sluice.core.config.CertificateConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.TlsConfig;

import javax.net.ssl.SSLException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;

/**
 * TLS for the start-up warm-up (io.sluice.server.warmup.WarmUp): the private gateway's TLS listener
 * gets a configured listener's TLS settings (the same certificate files, protocols, cipher suites,
 * ALPN and ticket policy, so the same {@link DownstreamTls} / {@code SslHandler} path with a context
 * built the same way), and the synthetic clients a context that trusts exactly that listener's
 * certificates and is used for nothing else.
 *
 * @param listener what the private TLS listener runs: the configured one's settings without client
 *                 certificates (the synthetic clients have none), without file watching, ALPN
 *                 http/1.1 at most
 * @param client   the synthetic clients' context
 */
public record WarmUpTls(TlsConfig listener, SslContext client) {

    /** The first configured listener with TLS, or null when there is none. */
    public static TlsConfig firstTlsListener(List<ListenerConfig> listeners) {
        for (ListenerConfig l : listeners) {
            if (l.tls() != null) {
                return l.tls();
            }
        }
        return null;
    }

    /**
     * Builds both sides from a configured listener's TLS settings.
     *
     * @throws io.sluice.core.config.ConfigException when a certificate file does not load
     * @throws SSLException                          when the client context cannot be built
     */
    public static WarmUpTls of(TlsConfig real) throws SSLException {
        TlsConfig listener = real.toBuilder().clientAuth(TlsConfig.ClientAuth.NONE, null).forwardIdentity(false)
                .watchFiles(false).allowPlaintext(false)
                // HTTP/1.1 only: the private listener has no HTTP/2 (ALPN h2 would pick a protocol it does not run)
                .alpn(real.alpn().contains(TlsConfig.ALPN_HTTP_1_1) ? List.of(TlsConfig.ALPN_HTTP_1_1) : List.of()).build();
        Date now = new Date();
        List<X509Certificate> trusted = new ArrayList<>();
        for (CertificateConfig c : real.certificates()) {
            for (X509Certificate x : KeyMaterial.load(c, now).chain()) {
                trusted.add(x); // the listener's own chains are the only trust anchors
            }
        }
        SslContextBuilder b = SslContextBuilder.forClient().sslProvider(TlsProvider.provider())
                .trustManager(trusted.toArray(X509Certificate[]::new)).protocols(real.protocols())
                .endpointIdentificationAlgorithm(null); // it trusts exactly the listener's certificates: no host name to check
        if (!real.cipherSuites().isEmpty()) {
            b.ciphers(real.cipherSuites());
        }
        if (real.alpn().contains(TlsConfig.ALPN_HTTP_1_1)) {
            b.applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                    ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                    ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT, TlsConfig.ALPN_HTTP_1_1));
        }
        return new WarmUpTls(listener, b.build());
    }
}
