package io.sluice.server.tls;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Test certificates made at run time with the {@code openssl} CLI in a temp directory: a CA and
 * leaf certificates signed by it with chosen SANs and validity. No key is ever committed.
 */
public final class TestPki {

    private final Path dir;
    private final String name;

    private TestPki(Path dir, String name) {
        this.dir = dir;
        this.name = name;
    }

    /** A new CA ({@code name}-ca.pem / -ca.key) in {@code dir}. */
    public static TestPki ca(Path dir, String name) {
        TestPki p = new TestPki(dir, name);
        p.run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", p.caKey().toString(), "-out", p.caCert().toString(), "-days", "30", "-subj", "/CN=" + name + " test CA");
        return p;
    }

    public Path caCert() {
        return dir.resolve(name + "-ca.pem");
    }

    private Path caKey() {
        return dir.resolve(name + "-ca.key");
    }

    /** A leaf pair: {@code leaf}.pem (leaf + CA chain) and {@code leaf}.key (PKCS#8), valid {@code days} (negative: expired). */
    public Leaf leaf(String leaf, String cn, int days, String... sans) {
        return leaf(leaf, cn, days, "ec", (String[]) sans);
    }

    /** An RSA-2048 leaf. */
    public Leaf rsaLeaf(String leaf, String cn, int days, String... sans) {
        return leaf(leaf, cn, days, "rsa", sans);
    }

    /** @param keyType "ec" (P-256) or "rsa" (2048) */
    private Leaf leaf(String leaf, String cn, int days, String keyType, String[] sans) {
        Path key = dir.resolve(leaf + ".key");
        Path csr = dir.resolve(leaf + ".csr");
        Path crt = dir.resolve(leaf + ".crt");
        Path chain = dir.resolve(leaf + ".pem");
        Path ext = dir.resolve(leaf + ".ext");
        try {
            Files.writeString(ext, sans.length == 0 ? "basicConstraints=CA:FALSE\n"
                    : "basicConstraints=CA:FALSE\nsubjectAltName=" + String.join(",", sans) + "\n");
            if (keyType.equals("rsa")) {
                run("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key.toString());
            } else {
                run("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key.toString());
            }
            run("openssl", "req", "-new", "-key", key.toString(), "-out", csr.toString(), "-subj", "/CN=" + cn);
            List<String> sign = new ArrayList<>(List.of("openssl", "x509", "-req", "-in", csr.toString(), "-CA", caCert().toString(),
                    "-CAkey", caKey().toString(), "-CAcreateserial", "-out", crt.toString(), "-extfile", ext.toString()));
            sign.addAll(List.of("-days", String.valueOf(days))); // negative: expired (not after < now)
            run(sign.toArray(String[]::new));
            Files.writeString(chain, Files.readString(crt) + Files.readString(caCert()));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return new Leaf(chain, key);
    }

    /** A leaf certificate and key pair. */
    public record Leaf(Path chain, Path key) {

        /** The pair as a PKCS#12 store with {@code password}. */
        public Path pkcs12(String password) {
            Path p = Path.of(chain.toString().replace(".pem", ".p12"));
            new TestPki(chain.getParent(), "x").run("openssl", "pkcs12", "-export", "-in", chain.toString(),
                    "-inkey", key.toString(), "-out", p.toString(), "-passout", "pass:" + password);
            return p;
        }

        /** A client SSLContext presenting this pair and trusting {@code ca}. */
        public SSLContext clientContext(Path ca) {
            try {
                Path p12 = pkcs12("pw");
                KeyStore ks = KeyStore.getInstance("PKCS12");
                ks.load(Files.newInputStream(p12), "pw".toCharArray());
                KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(ks, "pw".toCharArray());
                SSLContext c = SSLContext.getInstance("TLS");
                c.init(kmf.getKeyManagers(), trustManagers(ca).getTrustManagers(), null);
                return c;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** A client SSLContext trusting only {@code ca} (pinned), presenting no certificate. */
    public static SSLContext trusting(Path ca) {
        try {
            SSLContext c = SSLContext.getInstance("TLS");
            c.init(null, trustManagers(ca).getTrustManagers(), null);
            return c;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** A PKCS#12 trust store holding {@code ca} (for clients configured by a key store file). */
    public static Path trustStore(Path ca, Path file, String password) {
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setCertificateEntry("ca", cert(ca));
            try (var out = Files.newOutputStream(file)) {
                ks.store(out, password.toCharArray());
            }
            return file;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static TrustManagerFactory trustManagers(Path ca) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setCertificateEntry("ca", cert(ca));
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        return tmf;
    }

    static Certificate cert(Path pem) throws Exception {
        return CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(Files.readAllBytes(pem)));
    }

    void run(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", cmd) + ": " + new String(out));
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
