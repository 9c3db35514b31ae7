package io.sluice.server.config;

import io.sluice.core.config.UpstreamTlsConfig;
import io.sluice.server.tls.upstream.UpstreamSslContexts;

import java.util.List;

/**
 * A cluster's {@code tls} object (native format): TLS from the gateway to the cluster's hosts.
 * The files it names are read and checked here (CA bundle, certificate chain, key and that the
 * two match, PKCS#12), so a bad file is a config error naming its JSON path at load time.
 */
final class UpstreamTlsJson {

    private UpstreamTlsJson() {
    }

    /** {@code $.clusters[i].tls}, or null when absent (cleartext). */
    static UpstreamTlsConfig read(JsonObject o) {
        if (o == null) {
            return null;
        }
        UpstreamTlsConfig d = UpstreamTlsConfig.defaults();
        boolean verify = o.bool("verify", d.verify());
        String ca = o.string("ca_file", null);
        String sni = o.string("sni", null);
        boolean verifyHost = o.bool("verify_host", d.verifyHost());
        String cert = o.string("cert_file", null);
        String key = o.string("key_file", null);
        String keyPassword = o.string("key_password", null);
        String p12 = o.string("pkcs12_file", null);
        String p12Password = o.string("pkcs12_password", null);
        List<String> protocols = o.has("protocols") ? o.strings("protocols") : null;
        List<String> ciphers = o.strings("ciphers");
        String provider = o.string("provider", null);
        o.finish();
        UpstreamTlsConfig t = ConfigLoader.build(o.path(), () -> new UpstreamTlsConfig(verify, ca, sni, verifyHost, cert, key,
                keyPassword, p12, p12Password, protocols, ciphers, provider));
        ConfigLoader.build(o.path(), () -> {
            UpstreamSslContexts.check(t);
            return t;
        });
        return t;
    }
}
