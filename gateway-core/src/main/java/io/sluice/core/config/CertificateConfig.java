package io.sluice.core.config;

import java.util.List;
import java.util.Locale;

/**
 * One server certificate of a downstream TLS listener: either a PEM certificate chain (leaf first)
 * with its PEM private key (PKCS#8, optionally encrypted with {@code password}), or a PKCS#12 file
 * (its first key entry; {@code password} opens the store and the key).
 *
 * @param certChain   PEM file with the certificate chain, leaf first (with {@code privateKey})
 * @param privateKey  PEM file with the PKCS#8 private key (with {@code certChain})
 * @param pkcs12      PKCS#12 file holding key and chain (instead of the two PEM files)
 * @param password    password of an encrypted PEM key or of the PKCS#12 file; null = none
 * @param serverNames SNI names this certificate answers: exact host names or {@code *.suffix}
 *                    (one label); empty = only as the default (the listener's first certificate
 *                    answers clients without SNI or with an unknown name)
 */
public record CertificateConfig(String certChain, String privateKey, String pkcs12, String password,
                                List<String> serverNames) {

    public CertificateConfig {
        serverNames = Checks.list(serverNames);
        boolean pem = certChain != null || privateKey != null;
        if (pem && pkcs12 != null) {
            throw new ConfigException("pkcs12", pkcs12, "either cert_chain + private_key or pkcs12, not both");
        }
        if (!pem && pkcs12 == null) {
            throw new ConfigException("cert_chain", null, "cert_chain + private_key (PEM) or pkcs12");
        }
        if (pem) {
            Checks.notBlank("cert_chain", certChain);
            Checks.notBlank("private_key", privateKey);
        } else {
            Checks.notBlank("pkcs12", pkcs12);
        }
        for (int i = 0; i < serverNames.size(); i++) {
            String n = serverNames.get(i);
            String field = "server_names[" + i + "]";
            Checks.notBlank(field, n);
            String host = n.startsWith("*.") ? n.substring(2) : n;
            if (host.isEmpty() || host.contains("*") || host.startsWith(".") || host.endsWith(".")
                    || !host.matches("[A-Za-z0-9.-]+")) {
                throw new ConfigException(field, n, "a host name, or *.suffix (the wildcard as the whole left-most label)");
            }
        }
        serverNames = serverNames.stream().map(s -> s.toLowerCase(Locale.ROOT)).toList();
    }

    /** A PEM pair. */
    public static CertificateConfig pem(String certChain, String privateKey, String... serverNames) {
        return new CertificateConfig(certChain, privateKey, null, null, List.of(serverNames));
    }

    /** The file a loading error names first (the chain, or the PKCS#12 file). */
    public String primaryFile() {
        return pkcs12 != null ? pkcs12 : certChain;
    }
}
