package io.sluice.server.tls;

import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSslContextOption;
import io.netty.handler.ssl.OpenSslSessionContext;
import io.netty.handler.ssl.OpenSslSessionTicketKey;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.DomainWildcardMappingBuilder;
import io.netty.util.Mapping;
import io.sluice.core.config.CertificateConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.TlsConfig;

import javax.net.ssl.SSLException;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;

/**
 * The certificates of a TLS listener as loaded at one moment, immutable: one server
 * {@link SslContext} per certificate and the SNI mapping over them (exact names first, then
 * {@code *.suffix}; no SNI or an unknown name gets the first certificate). A reload builds a new
 * snapshot and swaps it in whole: new handshakes use it, open connections keep the context their
 * handshake started with.
 */
public final class TlsSnapshot {

    /**
     * What {@code /certs} shows of one loaded certificate.
     *
     * @param name        {@code certificates[i]} plus the first server name, if any
     * @param file        the chain or PKCS#12 file
     * @param serverNames the SNI names it answers (empty: default only)
     */
    public record Loaded(String name, String file, List<String> serverNames, String subject, String issuer,
                         Instant notBefore, Instant notAfter, String fingerprint) {
    }

    private final TlsConfig config;
    private final List<SslContext> contexts;
    private final List<Loaded> loaded;
    private final Mapping<String, SslContext> mapping;

    private TlsSnapshot(TlsConfig config, List<SslContext> contexts, List<Loaded> loaded, Mapping<String, SslContext> mapping) {
        this.config = config;
        this.contexts = contexts;
        this.loaded = loaded;
        this.mapping = mapping;
    }

    /**
     * Reads and validates every file of {@code config} and builds the contexts.
     *
     * @param defaultAlpn ALPN list when the config leaves it empty (null: none)
     * @throws ConfigException naming the field under {@code tls} (e.g. {@code tls.certificates[1].private_key})
     */
    public static TlsSnapshot load(TlsConfig config, SslProvider provider, OpenSslSessionTicketKey[] ticketKeys) {
        Date now = new Date();
        X509Certificate[] trust = null;
        if (config.clientAuth() != TlsConfig.ClientAuth.NONE) {
            try {
                trust = KeyMaterial.certificates(config.clientCa(), "client_ca").toArray(X509Certificate[]::new);
            } catch (ConfigException e) {
                throw e.under("tls");
            }
        }
        List<SslContext> contexts = new ArrayList<>();
        List<Loaded> loaded = new ArrayList<>();
        DomainWildcardMappingBuilder<SslContext> mapping = null;
        for (int i = 0; i < config.certificates().size(); i++) {
            CertificateConfig c = config.certificates().get(i);
            String at = "tls.certificates[" + i + "]";
            KeyMaterial km;
            try {
                km = KeyMaterial.load(c, now);
            } catch (ConfigException e) {
                throw e.under(at);
            }
            SslContext ctx = context(config, provider, km, trust, at);
            if (ticketKeys != null) {
                installTicketKeys(ctx, ticketKeys);
            }
            contexts.add(ctx);
            X509Certificate leaf = km.leaf();
            PeerIdentity id = PeerIdentity.of(leaf);
            loaded.add(new Loaded("certificates[" + i + "]" + (c.serverNames().isEmpty() ? "" : " " + c.serverNames().get(0)),
                    c.primaryFile(), c.serverNames(), leaf.getSubjectX500Principal().getName(),
                    leaf.getIssuerX500Principal().getName(), leaf.getNotBefore().toInstant(), leaf.getNotAfter().toInstant(),
                    id.fingerprint()));
            if (mapping == null) {
                mapping = new DomainWildcardMappingBuilder<>(ctx);
            }
            for (String n : c.serverNames()) {
                mapping.add(n, ctx);
            }
        }
        return new TlsSnapshot(config, List.copyOf(contexts), List.copyOf(loaded), mapping.build());
    }

    /**
     * Reads and validates every file of {@code config} without building contexts: what the config
     * loader runs, so that {@code --check}, a start and a reload refuse a bad key, password, chain or
     * an expired certificate with exit 2 (the running certificates stay on a reload).
     *
     * @throws ConfigException naming the field under {@code tls}
     */
    public static void validateFiles(TlsConfig config) {
        Date now = new Date();
        if (config.clientAuth() != TlsConfig.ClientAuth.NONE) {
            try {
                KeyMaterial.certificates(config.clientCa(), "client_ca");
            } catch (ConfigException e) {
                throw e.under("tls");
            }
        }
        for (int i = 0; i < config.certificates().size(); i++) {
            try {
                KeyMaterial.load(config.certificates().get(i), now);
            } catch (ConfigException e) {
                throw e.under("tls.certificates[" + i + "]");
            }
        }
    }

    private static SslContext context(TlsConfig config, SslProvider provider, KeyMaterial km, X509Certificate[] trust, String at) {
        SslContextBuilder b = SslContextBuilder.forServer(km.key(), km.chain())
                .sslProvider(provider)
                .protocols(config.protocols());
        if (!config.cipherSuites().isEmpty()) {
            b.ciphers(config.cipherSuites());
        }
        if (!config.alpn().isEmpty()) {
            b.applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                    ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                    ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT, config.alpn()));
        }
        if (provider != SslProvider.JDK) {
            // the certificate callback runs inline in SSL_do_handshake instead of as a delegated task
            // (which cost a second doHandshake call and a trip through SslHandler's task machinery)
            b.option(OpenSslContextOption.USE_TASKS, false);
        }
        if (trust != null) {
            b.trustManager(trust).clientAuth(config.clientAuth() == TlsConfig.ClientAuth.REQUIRE
                    ? ClientAuth.REQUIRE : ClientAuth.OPTIONAL);
        }
        try {
            SslContext ctx = b.build();
            if (ctx.sessionContext() instanceof OpenSslSessionContext s) {
                // resumption is by stateless tickets only: no server-side session cache, whose
                // new-session callback called into Java (a cache entry) on every full handshake
                s.setSessionCacheEnabled(false);
            }
            return ctx;
        } catch (SSLException | IllegalArgumentException e) {
            String msg = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            if (!config.cipherSuites().isEmpty() && msg.toLowerCase(java.util.Locale.ROOT).contains("cipher")) {
                throw new ConfigException("tls.cipher_suites", String.join(":", config.cipherSuites()),
                        "cipher suites the " + provider + " provider supports (" + msg + ")");
            }
            throw new ConfigException(at, "certificate", "a certificate and key the " + provider + " provider accepts (" + msg + ")");
        }
    }

    /** Installs ticket keys (newest first) where the provider supports tickets (OpenSSL); a no-op otherwise. */
    static void installTicketKeys(SslContext ctx, OpenSslSessionTicketKey[] keys) {
        if (ctx.sessionContext() instanceof OpenSslSessionContext s) {
            s.setTicketKeys(keys);
        }
    }

    public TlsConfig config() {
        return config;
    }

    public List<SslContext> contexts() {
        return contexts;
    }

    public List<Loaded> loaded() {
        return loaded;
    }

    /** The context of a listener with one certificate (every SNI name and none get it), null with several. */
    public SslContext only() {
        return contexts.size() == 1 ? contexts.get(0) : null;
    }

    /** The context for an SNI host name (null: no SNI). */
    public SslContext select(String hostname) {
        return mapping.map(hostname);
    }
}
