package io.sluice.core.config;

import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * TLS from the gateway to the hosts of one cluster (re-encryption, mTLS mesh). Hung on
 * {@link ClusterConfig#tls()}; null there means cleartext. File paths are read when the config is
 * loaded (the loader checks them; a reload re-reads them), never per connection.
 *
 * @param verify        verify the upstream's certificate chain (default true); false accepts any
 *                      certificate and is logged as a warning once per (re)load
 * @param caFile        PEM bundle of the CAs trusted for upstream certificates; null = the JVM's
 *                      system trust store
 * @param sni           the server name sent (SNI) and checked against the certificate; null = the
 *                      host name of each host's address (a host given by IP address sends no SNI and
 *                      its certificate must carry that IP as a SAN, or set this)
 * @param verifyHost    check that the certificate names the host ({@code sni}, else the address);
 *                      default true. false keeps the chain check but skips the name check
 * @param certFile      PEM certificate chain presented to upstreams that ask for a client certificate
 *                      (mTLS); with {@code keyFile}
 * @param keyFile       PEM private key (PKCS#8, or PKCS#1 with the OpenSSL provider) of {@code certFile}
 * @param keyPassword   password of an encrypted {@code keyFile}, or null
 * @param pkcs12File    a PKCS#12 keystore holding the client key and chain instead of {@code certFile}/{@code keyFile}
 * @param pkcs12Password password of {@code pkcs12File} (may be null or empty)
 * @param protocols     enabled protocols; default TLSv1.3 and TLSv1.2 (only those two are accepted)
 * @param ciphers       TLS 1.2 cipher suites in preference order; empty = the provider's defaults
 *                      (TLS 1.3 suites cannot be chosen with BoringSSL)
 * @param provider      {@code auto} (default: OpenSSL/BoringSSL when it loads, else the JDK),
 *                      {@code openssl} (required) or {@code jdk}
 */
public record UpstreamTlsConfig(boolean verify, String caFile, String sni, boolean verifyHost,
                                String certFile, String keyFile, String keyPassword,
                                String pkcs12File, String pkcs12Password,
                                List<String> protocols, List<String> ciphers, String provider) {

    public static final String TLS_V1_2 = "TLSv1.2";
    public static final String TLS_V1_3 = "TLSv1.3";
    public static final List<String> DEFAULT_PROTOCOLS = List.of(TLS_V1_3, TLS_V1_2);
    public static final String PROVIDER_AUTO = "auto";
    public static final String PROVIDER_OPENSSL = "openssl";
    public static final String PROVIDER_JDK = "jdk";
    private static final Set<String> PROVIDERS = Set.of(PROVIDER_AUTO, PROVIDER_OPENSSL, PROVIDER_JDK);

    public UpstreamTlsConfig {
        caFile = blankToNull("ca_file", caFile);
        sni = blankToNull("sni", sni);
        certFile = blankToNull("cert_file", certFile);
        keyFile = blankToNull("key_file", keyFile);
        pkcs12File = blankToNull("pkcs12_file", pkcs12File);
        if (sni != null && (sni.indexOf(':') >= 0 || sni.indexOf(' ') >= 0 || sni.endsWith("."))) {
            throw new ConfigException("sni", sni, "a DNS host name such as \"api.internal\" (no port, no trailing dot)");
        }
        if ((certFile == null) != (keyFile == null)) {
            throw certFile == null
                    ? new ConfigException("cert_file", null, "a PEM certificate chain to go with key_file")
                    : new ConfigException("key_file", null, "a PEM private key to go with cert_file");
        }
        if (pkcs12File != null && certFile != null) {
            throw new ConfigException("pkcs12_file", pkcs12File, "either pkcs12_file or cert_file/key_file, not both");
        }
        if (keyPassword != null && keyFile == null) {
            throw new ConfigException("key_password", "***", "key_password only together with key_file");
        }
        if (pkcs12Password != null && pkcs12File == null) {
            throw new ConfigException("pkcs12_password", "***", "pkcs12_password only together with pkcs12_file");
        }
        protocols = protocols == null || protocols.isEmpty() ? DEFAULT_PROTOCOLS : List.copyOf(protocols);
        for (int i = 0; i < protocols.size(); i++) {
            String p = protocols.get(i);
            if (!TLS_V1_2.equals(p) && !TLS_V1_3.equals(p)) {
                throw new ConfigException("protocols[" + i + "]", p, "\"TLSv1.3\" or \"TLSv1.2\"");
            }
        }
        ciphers = Checks.list(ciphers);
        for (int i = 0; i < ciphers.size(); i++) {
            Checks.notBlank("ciphers[" + i + "]", ciphers.get(i));
        }
        provider = provider == null ? PROVIDER_AUTO : provider.toLowerCase(Locale.ROOT);
        if (!PROVIDERS.contains(provider)) {
            throw new ConfigException("provider", provider, "\"auto\", \"openssl\" or \"jdk\"");
        }
    }

    private static String blankToNull(String field, String v) {
        if (v != null && v.isBlank()) {
            throw new ConfigException(field, v, "a non-empty value (leave the key out for none)");
        }
        return v;
    }

    /** Verified TLS against the system trust store, TLS 1.2/1.3, SNI from each host's name. */
    public static UpstreamTlsConfig defaults() {
        return builder().build();
    }

    /** Whether a client certificate is configured (mTLS). */
    public boolean hasClientCertificate() {
        return certFile != null || pkcs12File != null;
    }

    @Override
    public String toString() { // no passwords in logs
        return "UpstreamTlsConfig[verify=" + verify + ", caFile=" + caFile + ", sni=" + sni + ", verifyHost=" + verifyHost
                + ", certFile=" + certFile + ", keyFile=" + keyFile + ", pkcs12File=" + pkcs12File
                + ", protocols=" + protocols + ", ciphers=" + ciphers + ", provider=" + provider + "]";
    }

    /** A builder with the defaults a config file gets for keys it leaves out. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this config's values. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.verify = verify;
        b.caFile = caFile;
        b.sni = sni;
        b.verifyHost = verifyHost;
        b.certFile = certFile;
        b.keyFile = keyFile;
        b.keyPassword = keyPassword;
        b.pkcs12File = pkcs12File;
        b.pkcs12Password = pkcs12Password;
        b.protocols = protocols;
        b.ciphers = ciphers;
        b.provider = provider;
        return b;
    }

    /**
     * Builds an {@link UpstreamTlsConfig} (defaults: verify on against the system trust store, host
     * names checked, no client certificate, TLS 1.3 + 1.2, provider ciphers, provider auto).
     * Validation happens in the record's constructor, when {@link #build()} is called.
     */
    public static final class Builder {
        private boolean verify = true;
        private String caFile;
        private String sni;
        private boolean verifyHost = true;
        private String certFile;
        private String keyFile;
        private String keyPassword;
        private String pkcs12File;
        private String pkcs12Password;
        private List<String> protocols = DEFAULT_PROTOCOLS;
        private List<String> ciphers = List.of();
        private String provider = PROVIDER_AUTO;

        private Builder() {
        }

        public Builder verify(boolean verify) {
            this.verify = verify;
            return this;
        }

        public Builder caFile(String caFile) {
            this.caFile = caFile;
            return this;
        }

        public Builder sni(String sni) {
            this.sni = sni;
            return this;
        }

        public Builder verifyHost(boolean verifyHost) {
            this.verifyHost = verifyHost;
            return this;
        }

        /** The client certificate chain and its key (PEM), for mTLS. */
        public Builder clientCertificate(String certFile, String keyFile) {
            this.certFile = certFile;
            this.keyFile = keyFile;
            return this;
        }

        public Builder keyPassword(String keyPassword) {
            this.keyPassword = keyPassword;
            return this;
        }

        /** The client key and chain from a PKCS#12 keystore, for mTLS. */
        public Builder pkcs12(String file, String password) {
            this.pkcs12File = file;
            this.pkcs12Password = password;
            return this;
        }

        public Builder protocols(List<String> protocols) {
            this.protocols = protocols;
            return this;
        }

        public Builder ciphers(List<String> ciphers) {
            this.ciphers = ciphers;
            return this;
        }

        public Builder provider(String provider) {
            this.provider = provider;
            return this;
        }

        public UpstreamTlsConfig build() {
            return new UpstreamTlsConfig(verify, caFile, sni, verifyHost, certFile, keyFile, keyPassword, pkcs12File,
                    pkcs12Password, protocols, ciphers, provider);
        }
    }
}
