package io.sluice.server.config;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.core.config.CertificateConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.TlsConfig;

import java.util.ArrayList;
import java.util.List;

/**
 * A MOSN listener's {@code tls_context} (or {@code tls_context_set}, one certificate per entry,
 * chosen by its {@code server_name}) as a native {@link TlsConfig}. Mapped: {@code status},
 * {@code cert_chain} / {@code private_key} (file paths), {@code server_name}, {@code ca_cert},
 * {@code verify_client} / {@code require_client_cert}, {@code cipher_suites} ("A:B"),
 * {@code min_version} / {@code max_version}, {@code alpn}. Everything else is rejected unless empty
 * or false, naming its path; inline PEM is rejected (certificates are files the gateway watches).
 */
final class MosnListenerTls {

    private MosnListenerTls() {
    }

    /**
     * @param single the chain's {@code tls_context} (may be null)
     * @param set    the chain's {@code tls_context_set} (may be null)
     * @return null when TLS is off ({@code "status": false}, absent or empty)
     */
    static TlsConfig read(JsonObject chain, Protocol protocol) {
        List<JsonObject> contexts = new ArrayList<>();
        JsonNode one = chain.raw("tls_context");
        if (one != null && one.isObject() && one.size() > 0) {
            contexts.add(JsonObject.of(one, chain.at("tls_context")));
        }
        JsonNode set = chain.raw("tls_context_set");
        if (set != null && set.isArray()) {
            for (int i = 0; i < set.size(); i++) {
                contexts.add(JsonObject.of(set.get(i), chain.at("tls_context_set") + "[" + i + "]"));
            }
        }
        List<CertificateConfig> certs = new ArrayList<>();
        List<String> certPaths = new ArrayList<>();
        TlsConfig.Builder b = TlsConfig.builder().alpn(TlsConfigReader.defaultAlpn(protocol));
        boolean first = true;
        String path = null;
        for (JsonObject c : contexts) {
            if (!c.bool("status", false)) {
                c.ignore("type", "server_name", "ca_cert", "cert_chain", "private_key", "verify_client", "require_client_cert",
                        "insecure_skip", "cipher_suites", "ecdh_curves", "min_version", "max_version", "alpn", "ticket",
                        "fall_back", "extend_verify", "sds_source", "callbacks");
                c.finish();
                continue;
            }
            path = path == null ? c.path() : path;
            c.rejectUnless("type", v -> v.isTextual() && (v.asText().isEmpty() || v.asText().equals("default")),
                    "\"\" or \"default\" (TLS extension types are not supported)");
            String chainFile = file(c, "cert_chain");
            String keyFile = file(c, "private_key");
            String sni = c.string("server_name", null);
            certs.add(ConfigLoader.build(c.path(), () -> new CertificateConfig(chainFile, keyFile, null, null,
                    sni == null || sni.isEmpty() ? List.of() : List.of(sni))));
            certPaths.add(c.path());
            String ca = file(c, "ca_cert");
            boolean verify = c.bool("verify_client", false);
            boolean require = c.bool("require_client_cert", false);
            String ciphers = c.string("cipher_suites", "");
            String min = c.string("min_version", "");
            String max = c.string("max_version", "");
            JsonNode alpn = c.raw("alpn");
            c.rejectUnless("insecure_skip", MosnListenerTls::falseOrEmpty, "false (a client option)");
            c.rejectUnless("fall_back", MosnListenerTls::falseOrEmpty, "false (serving plain text after a failed handshake is not supported)");
            c.rejectUnless("ecdh_curves", MosnListenerTls::falseOrEmpty, "nothing (key-exchange groups are the provider's defaults)");
            c.rejectUnless("ticket", MosnListenerTls::falseOrEmpty, "nothing (ticket keys are made and rotated by the gateway)");
            c.rejectUnless("extend_verify", MosnListenerTls::falseOrEmpty, "nothing (extended verification is not supported)");
            c.rejectUnless("sds_source", MosnListenerTls::falseOrEmpty, "nothing (SDS is not supported; certificate files are watched)");
            c.rejectUnless("callbacks", MosnListenerTls::falseOrEmpty, "nothing");
            c.finish();
            if (!first) {
                continue; // settings come from the first context; the others add certificates
            }
            first = false;
            if (verify) {
                if (ca == null) {
                    throw new ConfigException(c.at("ca_cert"), null, "a CA bundle file (verify_client is true)");
                }
                b.clientAuth(require ? TlsConfig.ClientAuth.REQUIRE : TlsConfig.ClientAuth.OPTIONAL, ca);
            }
            if (!ciphers.isEmpty()) {
                b.cipherSuites(List.of(ciphers.split(":")));
            }
            b.protocols(versions(c, min, max));
            if (alpn != null && !(alpn.isTextual() && alpn.asText().isEmpty())) {
                List<String> ids = new ArrayList<>();
                if (alpn.isTextual()) {
                    for (String s : alpn.asText().split(",")) {
                        ids.add(s.trim());
                    }
                } else if (alpn.isArray()) {
                    alpn.forEach(n -> ids.add(n.asText()));
                }
                b.alpn(ids);
            }
        }
        if (certs.isEmpty()) {
            return null;
        }
        TlsConfig tls = ConfigLoader.build(path, () -> b.certificates(certs).build());
        try {
            io.sluice.server.tls.TlsSnapshot.validateFiles(tls);
        } catch (ConfigException e) {
            throw mosnPath(e, certPaths);
        }
        return tls;
    }

    /** A file error of the native form ({@code tls.certificates[i].private_key}) at its MOSN path. */
    private static ConfigException mosnPath(ConfigException e, List<String> certPaths) {
        String p = e.path();
        String at;
        if (p.startsWith("tls.certificates[")) {
            int end = p.indexOf(']');
            int i = Integer.parseInt(p.substring("tls.certificates[".length(), end));
            at = certPaths.get(i) + p.substring(end + 1);
        } else if (p.equals("tls.client_ca")) {
            at = certPaths.get(0) + ".ca_cert";
        } else {
            return e.under(certPaths.get(0));
        }
        return new ConfigException(at, e.value(), e.expected());
    }

    private static boolean falseOrEmpty(JsonNode v) {
        return v.isBoolean() && !v.asBoolean() || v.isContainerNode() && v.size() == 0 || v.isTextual() && v.asText().isEmpty();
    }

    private static String file(JsonObject c, String key) {
        String s = c.string(key, null);
        if (s == null || s.isEmpty()) {
            return null;
        }
        if (s.contains("-----BEGIN")) {
            throw new ConfigException(c.at(key), "(inline PEM)", "a file path (inline PEM is not supported: the gateway"
                    + " watches certificate files for rotation)");
        }
        return s;
    }

    /** MOSN's min/max versions ("TLSv1_2", "TLS1.3", ...) as a protocol list. */
    private static List<String> versions(JsonObject c, String min, String max) {
        int lo = version(c, "min_version", min, 2);
        int hi = version(c, "max_version", max, 3);
        List<String> out = new ArrayList<>();
        for (int v = lo; v <= hi; v++) {
            out.add("TLSv1." + v);
        }
        if (out.isEmpty()) {
            throw new ConfigException(c.at("max_version"), max, "a version at or above min_version");
        }
        return out;
    }

    private static int version(JsonObject c, String key, String v, int def) {
        if (v.isEmpty() || v.equalsIgnoreCase("TLS_AUTO") || v.equalsIgnoreCase("auto")) {
            return def;
        }
        String digits = v.replaceAll("[^0-9]", "");
        return switch (digits) {
            case "12" -> 2;
            case "13" -> 3;
            default -> throw new ConfigException(c.at(key), v, "TLSv1_2 or TLSv1_3 (older versions are not supported)");
        };
    }
}
