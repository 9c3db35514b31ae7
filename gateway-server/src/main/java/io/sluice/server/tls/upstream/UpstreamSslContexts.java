package io.sluice.server.tls.upstream;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.IdentityCipherSuiteFilter;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import io.netty.util.ReferenceCountUtil;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.UpstreamTlsConfig;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSessionContext;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.InvalidKeyException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Builds the client {@link SslContext} of one cluster's {@code tls} block, reading its files once
 * (config load or reload, off the event loops). Every problem is a {@link ConfigException} whose
 * path is relative to the {@code tls} object ({@code ca_file}, {@code key_file}, ...) so the loader
 * can place it under {@code $.clusters[i].tls}.
 */
public final class UpstreamSslContexts {

    /** Client sessions kept for resumption (per context), and how long. */
    static final int SESSION_CACHE_SIZE = 4096;
    static final long SESSION_TIMEOUT_SECONDS = 3600;

    private UpstreamSslContexts() {
    }

    /** The provider {@code auto} picks here: OpenSSL (BoringSSL) when it loads, else the JDK. */
    public static SslProvider provider(UpstreamTlsConfig c) {
        return switch (c.provider()) {
            case UpstreamTlsConfig.PROVIDER_JDK -> SslProvider.JDK;
            case UpstreamTlsConfig.PROVIDER_OPENSSL -> {
                if (!OpenSsl.isAvailable()) {
                    Throwable why = OpenSsl.unavailabilityCause();
                    throw new ConfigException("provider", c.provider(), "\"auto\" or \"jdk\": OpenSSL is not available here ("
                            + (why == null ? "unknown cause" : why.getMessage()) + ")");
                }
                yield SslProvider.OPENSSL;
            }
            default -> OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
        };
    }

    /**
     * Reads and checks the files of {@code c} without building a context (the config loader: a bad
     * file fails the load; the context itself is built once, when the config is applied).
     *
     * @throws ConfigException naming the field (relative to the tls object) and what is wrong
     */
    public static void check(UpstreamTlsConfig c) {
        provider(c);
        if (c.verify() && c.caFile() != null) {
            readCertificates("ca_file", c.caFile(), "a PEM file of CA certificates");
        }
        if (c.certFile() != null) {
            X509Certificate[] chain = readCertificates("cert_file", c.certFile(), "a PEM certificate chain");
            checkPair(chain[0], readKey(c));
        } else if (c.pkcs12File() != null) {
            readPkcs12(c);
        }
    }

    /**
     * Reads the files of {@code c} and builds its client context.
     *
     * @throws ConfigException naming the field (relative to the tls object) and what is wrong
     */
    public static SslContext build(UpstreamTlsConfig c) {
        return build(c, false);
    }

    /**
     * As {@link #build(UpstreamTlsConfig)}; with {@code h2} the context offers ALPN {@code h2} only
     * ({@code upstream_protocol: h2}: the peer must select it, docs/http2.md).
     */
    public static SslContext build(UpstreamTlsConfig c, boolean h2) {
        SslProvider provider = provider(c);
        SslContextBuilder b = SslContextBuilder.forClient().sslProvider(provider)
                .protocols(c.protocols())
                .sessionCacheSize(SESSION_CACHE_SIZE)
                .sessionTimeout(SESSION_TIMEOUT_SECONDS);
        if (h2) { // http2: ALPN h2 to the upstream
            b.applicationProtocolConfig(new io.netty.handler.ssl.ApplicationProtocolConfig(
                    io.netty.handler.ssl.ApplicationProtocolConfig.Protocol.ALPN,
                    io.netty.handler.ssl.ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                    io.netty.handler.ssl.ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                    io.netty.handler.ssl.ApplicationProtocolNames.HTTP_2));
        }
        if (!c.ciphers().isEmpty()) {
            b.ciphers(c.ciphers(), IdentityCipherSuiteFilter.INSTANCE);
        }
        if (!c.verify()) {
            b.trustManager(InsecureTrustManagerFactory.INSTANCE).endpointIdentificationAlgorithm(null);
        } else {
            if (c.caFile() != null) {
                b.trustManager(readCertificates("ca_file", c.caFile(), "a PEM file of CA certificates"));
            } // else: the JVM's default trust store
            b.endpointIdentificationAlgorithm(c.verifyHost() ? "HTTPS" : null);
        }
        if (c.certFile() != null) {
            X509Certificate[] chain = readCertificates("cert_file", c.certFile(), "a PEM certificate chain");
            PrivateKey key = readKey(c);
            checkPair(chain[0], key);
            b.keyManager(key, c.keyPassword(), chain);
        } else if (c.pkcs12File() != null) {
            b.keyManager(readPkcs12(c));
        }
        SslContext ctx;
        try {
            ctx = b.build();
        } catch (IOException | RuntimeException e) {
            throw new ConfigException(c.ciphers().isEmpty() ? "protocols" : "ciphers",
                    c.ciphers().isEmpty() ? String.valueOf(c.protocols()) : String.valueOf(c.ciphers()),
                    "settings the " + provider + " TLS provider accepts (" + message(e) + ")");
        }
        // One engine now, so that settings the provider only checks per engine (JDK: cipher names)
        // fail at load time and not on every connection.
        SSLEngine probe = null;
        try {
            probe = ctx.newEngine(ByteBufAllocator.DEFAULT, "localhost", 443);
        } catch (RuntimeException e) {
            ReferenceCountUtil.release(ctx);
            throw new ConfigException("ciphers", String.valueOf(c.ciphers()), "cipher suites the " + provider
                    + " TLS provider knows (" + message(e) + ")");
        } finally {
            if (probe != null) {
                ReferenceCountUtil.release(probe);
            }
        }
        SSLSessionContext sessions = ctx.sessionContext();
        if (sessions != null) {
            sessions.setSessionCacheSize(SESSION_CACHE_SIZE);
        }
        return ctx;
    }

    private static String message(Throwable e) {
        String m = e.getMessage();
        return m == null ? e.getClass().getSimpleName() : m;
    }

    private static Path readable(String field, String file, String what) {
        Path p = Path.of(file);
        if (!Files.isRegularFile(p) || !Files.isReadable(p)) {
            throw new ConfigException(field, file, "a readable file: " + what + " (" + (Files.exists(p) ? "not readable" : "no such file") + ")");
        }
        return p;
    }

    static X509Certificate[] readCertificates(String field, String file, String what) {
        Path p = readable(field, file, what);
        Collection<? extends Certificate> certs;
        try (InputStream in = Files.newInputStream(p)) {
            certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
        } catch (IOException | GeneralSecurityException e) {
            throw new ConfigException(field, file, what + " (" + message(e) + ")");
        }
        List<X509Certificate> out = new ArrayList<>();
        for (Certificate cert : certs) {
            if (cert instanceof X509Certificate x) {
                out.add(x);
            }
        }
        if (out.isEmpty()) {
            throw new ConfigException(field, file, what + " (no certificate found in it)");
        }
        return out.toArray(X509Certificate[]::new);
    }

    private static PrivateKey readKey(UpstreamTlsConfig c) {
        Path p = readable("key_file", c.keyFile(), "a PEM private key");
        try {
            PrivateKey k = Pkcs8.read(Files.readString(p), c.keyPassword());
            return k != null ? k : KeyReader.read(p.toFile(), c.keyPassword());
        } catch (Exception e) {
            throw new ConfigException("key_file", c.keyFile(), "a PEM private key (PKCS#8"
                    + (c.keyPassword() == null ? "" : ", encrypted with key_password") + ") that can be read (" + message(e) + ")");
        }
    }

    /** The key must sign what the leaf certificate's public key verifies: a swapped key fails at load, not at every handshake. */
    private static void checkPair(X509Certificate leaf, PrivateKey key) {
        PublicKey pub = leaf.getPublicKey();
        boolean match = true; // the key's algorithm name depends on who parsed it ("EC", "ECDSA"): a signature decides
        String alg = switch (pub.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "Ed25519", "EdDSA" -> "Ed25519";
            default -> null;
        };
        if (alg != null) { // other algorithms: the handshake will tell
            try {
                byte[] data = new byte[32];
                new SecureRandom().nextBytes(data);
                Signature sign = Signature.getInstance(alg);
                sign.initSign(key);
                sign.update(data);
                byte[] sig = sign.sign();
                Signature v = Signature.getInstance(alg);
                v.initVerify(pub);
                v.update(data);
                match = v.verify(sig);
            } catch (InvalidKeyException e) {
                // a key of another kind than the certificate's, or one this provider cannot sign with
                match = pub.getAlgorithm().equals(key.getAlgorithm()) || key.getAlgorithm().startsWith(pub.getAlgorithm());
            } catch (GeneralSecurityException e) {
                match = false;
            }
        }
        if (!match) {
            throw new ConfigException("key_file", "(key)", "the private key of the first certificate in cert_file"
                    + " (they do not match: " + leaf.getSubjectX500Principal().getName() + ")");
        }
    }

    private static KeyManagerFactory readPkcs12(UpstreamTlsConfig c) {
        Path p = readable("pkcs12_file", c.pkcs12File(), "a PKCS#12 keystore");
        char[] pw = c.pkcs12Password() == null ? new char[0] : c.pkcs12Password().toCharArray();
        try (InputStream in = Files.newInputStream(p)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, pw);
            boolean hasKey = false;
            for (String alias : java.util.Collections.list(ks.aliases())) {
                hasKey |= ks.isKeyEntry(alias);
            }
            if (!hasKey) {
                throw new ConfigException("pkcs12_file", c.pkcs12File(), "a PKCS#12 keystore holding a private key and its chain (none found)");
            }
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, pw);
            return kmf;
        } catch (IOException | GeneralSecurityException e) {
            throw new ConfigException("pkcs12_file", c.pkcs12File(), "a PKCS#12 keystore that opens with pkcs12_password ("
                    + message(e) + ")");
        }
    }

    /** Netty's PEM key reader ({@code SslContext.toPrivateKey}) is protected: reached through a never-instantiated subclass. */
    private abstract static class KeyReader extends SslContext {
        private KeyReader() {
        }

        static PrivateKey read(File f, String password) throws Exception {
            return toPrivateKey(f, password);
        }
    }
}
