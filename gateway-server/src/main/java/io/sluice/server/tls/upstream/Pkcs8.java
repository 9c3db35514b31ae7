package io.sluice.server.tls.upstream;

import javax.crypto.Cipher;
import javax.crypto.EncryptedPrivateKeyInfo;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a PEM PKCS#8 private key ({@code PRIVATE KEY}, or {@code ENCRYPTED PRIVATE KEY} with a
 * password) with the JDK's own key factories, so the key works with the JDK's signature providers
 * whatever else is on the classpath. Other PEM kinds (PKCS#1 {@code RSA PRIVATE KEY}, SEC1
 * {@code EC PRIVATE KEY}) return null and are left to Netty's reader.
 */
final class Pkcs8 {

    private static final Pattern PEM = Pattern.compile(
            "-----BEGIN (ENCRYPTED )?PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END (ENCRYPTED )?PRIVATE KEY-----");
    private static final String[] ALGORITHMS = {"RSA", "EC", "Ed25519", "Ed448", "DSA"};

    private Pkcs8() {
    }

    static PrivateKey read(String pem, String password) throws GeneralSecurityException, java.io.IOException {
        Matcher m = PEM.matcher(pem);
        if (!m.find()) {
            return null;
        }
        byte[] der = Base64.getMimeDecoder().decode(m.group(2));
        PKCS8EncodedKeySpec spec;
        if (m.group(1) != null) {
            if (password == null) {
                throw new InvalidKeySpecException("the key is encrypted: key_password is needed");
            }
            EncryptedPrivateKeyInfo info = new EncryptedPrivateKeyInfo(der);
            SecretKeyFactory f = SecretKeyFactory.getInstance(info.getAlgName());
            Cipher cipher = Cipher.getInstance(info.getAlgName());
            cipher.init(Cipher.DECRYPT_MODE, f.generateSecret(new PBEKeySpec(password.toCharArray())), info.getAlgParameters());
            spec = info.getKeySpec(cipher);
        } else {
            spec = new PKCS8EncodedKeySpec(der);
        }
        GeneralSecurityException last = null;
        for (String alg : ALGORITHMS) {
            try {
                return KeyFactory.getInstance(alg).generatePrivate(spec);
            } catch (GeneralSecurityException e) {
                last = e;
            }
        }
        throw last;
    }
}
