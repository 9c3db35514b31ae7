package io.sluice.server.tls;

import io.sluice.core.config.CertificateConfig;
import io.sluice.core.config.ConfigException;

import javax.crypto.Cipher;
import javax.crypto.EncryptedPrivateKeyInfo;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.Enumeration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A server certificate read from its files and validated: the chain parses (leaf first), the key
 * is the leaf's (a signature made with it verifies with the leaf's public key), and the leaf is
 * valid now. Errors are {@link ConfigException}s naming the field ({@code cert_chain},
 * {@code private_key}, {@code pkcs12}, {@code password}) and the file; the caller places them under
 * the certificate's JSON path.
 *
 * @param key   the private key
 * @param chain the certificate chain, leaf first
 */
public record KeyMaterial(PrivateKey key, X509Certificate[] chain) {

    private static final Pattern PEM_KEY = Pattern.compile(
            "-----BEGIN (ENCRYPTED PRIVATE KEY|PRIVATE KEY|RSA PRIVATE KEY|EC PRIVATE KEY)-----([^-]+)-----END \\1-----");

    /** The leaf certificate. */
    public X509Certificate leaf() {
        return chain[0];
    }

    /** Loads and validates the key and chain of {@code c}, checking validity at {@code now}. */
    public static KeyMaterial load(CertificateConfig c, Date now) {
        KeyMaterial m = c.pkcs12() != null ? pkcs12(c) : pem(c);
        m.validate(c, now);
        return m;
    }

    private static KeyMaterial pem(CertificateConfig c) {
        List<X509Certificate> chain = certificates(c.certChain(), "cert_chain");
        String text = read(c.privateKey(), "private_key");
        Matcher m = PEM_KEY.matcher(text);
        if (!m.find()) {
            throw new ConfigException("private_key", c.privateKey(), "a PEM file with a PKCS#8 private key (BEGIN PRIVATE KEY)");
        }
        if (m.group(1).startsWith("RSA") || m.group(1).startsWith("EC")) {
            throw new ConfigException("private_key", c.privateKey(), "a PKCS#8 key (BEGIN PRIVATE KEY), not "
                    + m.group(1) + " (convert it: openssl pkcs8 -topk8 -nocrypt)");
        }
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(m.group(2).trim());
        } catch (IllegalArgumentException e) {
            throw new ConfigException("private_key", c.privateKey(), "a PEM file with valid base64 (" + e.getMessage() + ")");
        }
        PKCS8EncodedKeySpec spec;
        if (m.group(1).startsWith("ENCRYPTED")) {
            if (c.password() == null) {
                throw new ConfigException("password", null, "the password of the encrypted key " + c.privateKey());
            }
            try {
                EncryptedPrivateKeyInfo info = new EncryptedPrivateKeyInfo(der);
                SecretKeyFactory f = SecretKeyFactory.getInstance(info.getAlgName());
                Key pbe = f.generateSecret(new PBEKeySpec(c.password().toCharArray()));
                Cipher cipher = Cipher.getInstance(info.getAlgName());
                cipher.init(Cipher.DECRYPT_MODE, pbe, info.getAlgParameters());
                spec = info.getKeySpec(cipher);
            } catch (GeneralSecurityException | IOException e) {
                throw new ConfigException("password", "***", "the password of the encrypted key " + c.privateKey()
                        + " (" + e.getClass().getSimpleName() + ")");
            }
        } else {
            spec = new PKCS8EncodedKeySpec(der);
        }
        PrivateKey key = null;
        for (String alg : new String[]{"RSA", "EC", "Ed25519", "RSASSA-PSS"}) {
            try {
                key = KeyFactory.getInstance(alg).generatePrivate(spec);
                break;
            } catch (InvalidKeySpecException | java.security.NoSuchAlgorithmException e) {
                // next algorithm
            }
        }
        if (key == null) {
            throw new ConfigException("private_key", c.privateKey(), "an RSA, EC or Ed25519 private key");
        }
        return new KeyMaterial(key, chain.toArray(X509Certificate[]::new));
    }

    private static KeyMaterial pkcs12(CertificateConfig c) {
        char[] pw = c.password() == null ? new char[0] : c.password().toCharArray();
        KeyStore ks;
        try {
            ks = KeyStore.getInstance("PKCS12");
            ks.load(new ByteArrayInputStream(bytes(c.pkcs12(), "pkcs12")), pw);
        } catch (IOException e) {
            boolean password = e.getCause() instanceof java.security.UnrecoverableKeyException
                    || String.valueOf(e.getMessage()).contains("password");
            throw new ConfigException(password ? "password" : "pkcs12", password ? "***" : c.pkcs12(),
                    password ? "the password of " + c.pkcs12() : "a PKCS#12 file (" + e.getMessage() + ")");
        } catch (GeneralSecurityException e) {
            throw new ConfigException("pkcs12", c.pkcs12(), "a PKCS#12 file (" + e.getMessage() + ")");
        }
        try {
            for (Enumeration<String> aliases = ks.aliases(); aliases.hasMoreElements(); ) {
                String a = aliases.nextElement();
                if (ks.isKeyEntry(a)) {
                    Key k = ks.getKey(a, pw);
                    Certificate[] cs = ks.getCertificateChain(a);
                    if (k instanceof PrivateKey pk && cs != null && cs.length > 0) {
                        X509Certificate[] chain = new X509Certificate[cs.length];
                        for (int i = 0; i < cs.length; i++) {
                            chain[i] = (X509Certificate) cs[i];
                        }
                        return new KeyMaterial(pk, chain);
                    }
                }
            }
        } catch (GeneralSecurityException e) {
            throw new ConfigException("password", "***", "the key password of " + c.pkcs12() + " (" + e.getMessage() + ")");
        }
        throw new ConfigException("pkcs12", c.pkcs12(), "a PKCS#12 file with a private key and its certificate chain");
    }

    private void validate(CertificateConfig c, Date now) {
        String field = c.pkcs12() != null ? "pkcs12" : "private_key";
        String file = c.pkcs12() != null ? c.pkcs12() : c.privateKey();
        if (!matches(key, leaf())) {
            throw new ConfigException(field, file, "the private key of the certificate "
                    + leaf().getSubjectX500Principal().getName() + " (the key does not match it)");
        }
        String certField = c.pkcs12() != null ? "pkcs12" : "cert_chain";
        try {
            leaf().checkValidity(now);
        } catch (CertificateExpiredException e) {
            throw new ConfigException(certField, c.primaryFile(), "a certificate valid now (it expired "
                    + leaf().getNotAfter().toInstant() + ")");
        } catch (CertificateNotYetValidException e) {
            throw new ConfigException(certField, c.primaryFile(), "a certificate valid now (not before "
                    + leaf().getNotBefore().toInstant() + ")");
        }
    }

    /** Signs a probe with {@code key} and verifies it with the leaf's public key. */
    static boolean matches(PrivateKey key, X509Certificate leaf) {
        String alg = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "Ed25519", "EdDSA" -> "Ed25519";
            default -> null;
        };
        if (alg == null) {
            return leaf.getPublicKey().getAlgorithm().equals(key.getAlgorithm());
        }
        try {
            byte[] probe = "sluice key check".getBytes(StandardCharsets.US_ASCII);
            Signature s = Signature.getInstance(alg);
            s.initSign(key);
            s.update(probe);
            byte[] sig = s.sign();
            Signature v = Signature.getInstance(alg);
            v.initVerify(leaf.getPublicKey());
            v.update(probe);
            return v.verify(sig);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    /** Every certificate of a PEM file; at least one. */
    public static List<X509Certificate> certificates(String file, String field) {
        byte[] b = bytes(file, field);
        try {
            List<X509Certificate> out = new ArrayList<>();
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(b))) {
                out.add((X509Certificate) c);
            }
            if (out.isEmpty()) {
                throw new ConfigException(field, file, "a PEM file with at least one certificate");
            }
            return out;
        } catch (GeneralSecurityException e) {
            throw new ConfigException(field, file, "a PEM file of certificates (" + e.getMessage() + ")");
        }
    }

    private static String read(String file, String field) {
        return new String(bytes(file, field), StandardCharsets.US_ASCII);
    }

    private static byte[] bytes(String file, String field) {
        try {
            return Files.readAllBytes(Path.of(file));
        } catch (IOException e) {
            throw new ConfigException(field, file, "a readable file (" + e.getClass().getSimpleName() + ")");
        }
    }
}
