package io.sluice.server.testing;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

import java.io.IOException;
import java.io.OutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A throw-away PKI for TLS tests, generated at run time (no key is ever committed): a CA and leaf
 * certificates it signs, with the subject alternative names and validity window a test picks,
 * written as PEM (certificate chain, PKCS#8 key) or PKCS#12 into a directory of the test's.
 * EC P-256 keys: fast to make.
 */
public final class TestPki {

    private static final AtomicLong SERIAL = new AtomicLong(System.nanoTime() & 0xffffffL);

    private final Path dir;
    private final String name;
    private final KeyPair caKeys;
    private final X509Certificate ca;

    private TestPki(Path dir, String name) throws Exception {
        this.dir = dir;
        this.name = name;
        this.caKeys = keyPair();
        X500Name subject = new X500Name("CN=" + name + " Test CA");
        Instant now = Instant.now();
        X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(subject, serial(), Date.from(now.minus(Duration.ofDays(1))),
                Date.from(now.plus(Duration.ofDays(30))), subject, caKeys.getPublic());
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
        b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign | KeyUsage.digitalSignature));
        this.ca = sign(b, caKeys);
    }

    /** A new CA named {@code name}, writing its files under {@code dir}. */
    public static TestPki create(Path dir, String name) {
        try {
            return new TestPki(dir, name);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The CA certificate as a PEM file. */
    public Path caFile() {
        Path p = dir.resolve(name + "-ca.pem");
        if (!Files.exists(p)) {
            write(p, pem("CERTIFICATE", encoded(ca)));
        }
        return p;
    }

    /** A leaf valid from an hour ago for 30 days, for the given DNS names and IP addresses. */
    public Leaf leaf(String fileName, String... names) {
        Instant now = Instant.now();
        return leaf(fileName, now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(30)), names);
    }

    /** A leaf valid in [{@code notBefore}, {@code notAfter}] for the given names (IP literals become IP SANs). */
    public Leaf leaf(String fileName, Instant notBefore, Instant notAfter, String... names) {
        try {
            KeyPair keys = keyPair();
            X500Name subject = new X500Name("CN=" + (names.length > 0 ? names[0] : fileName));
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(new X500Name(ca.getSubjectX500Principal().getName()),
                    serial(), Date.from(notBefore), Date.from(notAfter), subject, keys.getPublic());
            List<GeneralName> sans = new ArrayList<>();
            for (String n : names) {
                boolean ip = n.matches("[0-9.]+") || n.contains(":");
                sans.add(new GeneralName(ip ? GeneralName.iPAddress : GeneralName.dNSName, n));
            }
            if (!sans.isEmpty()) {
                b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(sans.toArray(GeneralName[]::new)));
            }
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyAgreement));
            X509Certificate cert = sign(b, caKeys);
            Path certFile = dir.resolve(fileName + ".pem");
            Path keyFile = dir.resolve(fileName + "-key.pem");
            write(certFile, pem("CERTIFICATE", encoded(cert)) + pem("CERTIFICATE", encoded(ca)));
            write(keyFile, pem("PRIVATE KEY", keys.getPrivate().getEncoded()));
            return new Leaf(certFile, keyFile, cert, keys, ca);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** A leaf certificate and its key, as PEM files. */
    public record Leaf(Path certFile, Path keyFile, X509Certificate cert, KeyPair keys, X509Certificate ca) {

        /** The same key and chain as a PKCS#12 keystore file protected by {@code password}. */
        public Path pkcs12(String password) {
            try {
                KeyStore ks = KeyStore.getInstance("PKCS12");
                ks.load(null, null);
                ks.setKeyEntry("client", keys.getPrivate(), password.toCharArray(), new Certificate[] {cert, ca});
                Path p = certFile.resolveSibling(certFile.getFileName() + ".p12");
                try (OutputStream out = Files.newOutputStream(p)) {
                    ks.store(out, password.toCharArray());
                }
                return p;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static KeyPair keyPair() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(256);
        return g.generateKeyPair();
    }

    private static BigInteger serial() {
        return BigInteger.valueOf(SERIAL.incrementAndGet());
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, KeyPair issuer) throws Exception {
        return new JcaX509CertificateConverter().getCertificate(
                b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuer.getPrivate())));
    }

    private static byte[] encoded(X509Certificate c) {
        try {
            return c.getEncoded();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der) + "\n-----END " + type + "-----\n";
    }

    private static void write(Path p, String text) {
        try {
            Files.writeString(p, text);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
