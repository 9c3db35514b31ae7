package io.sluice.server.config;

import io.sluice.core.config.ConfigException;
import io.sluice.core.config.UpstreamTlsConfig;
import io.sluice.server.tls.upstream.UpstreamSslContexts;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A MOSN {@code tls_context} on a cluster (or on {@code cluster_manager}, for clusters with
 * {@code "cluster_manager_tls": true}) as this gateway's upstream {@link UpstreamTlsConfig}:
 * {@code status} on/off, {@code ca_cert}, {@code cert_chain} + {@code private_key} (file paths),
 * {@code server_name} (SNI), {@code insecure_skip} (verification off), {@code min_version} /
 * {@code max_version} and {@code cipher_suites}. Keys it cannot map with the same effect (inline
 * PEM, ALPN, ECDH curves, fallback to plain text, server-side keys, SDS, extension types) are
 * errors naming their path.
 */
final class MosnTls {

    private MosnTls() {
    }

    /** The upstream TLS of a MOSN {@code tls_context}, or null when it is absent, empty or {@code "status": false}. */
    static UpstreamTlsConfig upstream(JsonObject o) {
        if (o == null) {
            return null;
        }
        if (!o.bool("status", false)) {
            o.ignore("type", "server_name", "ca_cert", "cert_chain", "private_key", "verify_client", "require_client_cert",
                    "insecure_skip", "cipher_suites", "ecdh_curves", "min_version", "max_version", "alpn", "ticket",
                    "fall_back", "extend_verify", "sds_source", "callbacks", "pk_password");
            o.finish();
            return null; // TLS off: what else it says does not apply
        }
        o.rejectUnless("type", v -> v.isTextual() && v.asText().isEmpty(), "\"\": TLS extension types are not supported");
        String sni = o.string("server_name", null);
        String ca = file(o, "ca_cert");
        String cert = file(o, "cert_chain");
        String key = file(o, "private_key");
        String keyPassword = o.string("pk_password", null);
        boolean insecure = o.bool("insecure_skip", false);
        o.rejectUnless("verify_client", v -> v.isBoolean() && !v.asBoolean(), "false: verify_client is for listeners (downstream TLS)");
        o.rejectUnless("require_client_cert", v -> v.isBoolean() && !v.asBoolean(),
                "false: require_client_cert is for listeners (downstream TLS)");
        List<String> protocols = protocols(o);
        List<String> ciphers = new ArrayList<>();
        String suites = o.string("cipher_suites", "");
        for (String s : suites.split(":")) {
            if (!s.isBlank()) {
                ciphers.add(s.trim());
            }
        }
        o.rejectUnless("ecdh_curves", v -> v.isTextual() && v.asText().isEmpty(),
                "\"\": key-exchange groups are not configurable for upstream TLS (the provider's defaults apply)");
        o.rejectUnless("alpn", v -> v.isTextual() && (v.asText().isEmpty() || v.asText().equalsIgnoreCase("http/1.1")),
                "\"\" or \"http/1.1\": ALPN to upstreams is not supported (HTTP/1.1 and Bolt only)");
        o.rejectUnless("ticket", v -> v.isTextual() && v.asText().isEmpty(), "\"\": session ticket keys are for listeners");
        o.rejectUnless("fall_back", v -> v.isBoolean() && !v.asBoolean(),
                "false: a failed TLS handshake never falls back to plain text here");
        for (String k : new String[] {"extend_verify", "sds_source", "callbacks"}) {
            o.rejectUnless(k, v -> v.isContainerNode() && v.size() == 0, "nothing here: not supported by this gateway");
        }
        o.finish();
        String path = o.path();
        UpstreamTlsConfig t = ConfigLoader.build(path, () -> new UpstreamTlsConfig(!insecure, ca, sni, true, cert, key,
                keyPassword, null, null, protocols, ciphers, null));
        ConfigLoader.build(path, () -> {
            try {
                UpstreamSslContexts.check(t);
            } catch (ConfigException e) {
                throw rename(e);
            }
            return t;
        });
        return t;
    }

    /** Errors of the native field names, under their MOSN names. */
    private static ConfigException rename(ConfigException e) {
        String p = e.path();
        String mosn = switch (p) {
            case "ca_file" -> "ca_cert";
            case "cert_file" -> "cert_chain";
            case "key_file" -> "private_key";
            default -> p;
        };
        return mosn.equals(p) ? e : new ConfigException(mosn, e.value(), e.expected());
    }

    /** A file path; MOSN also takes inline PEM, which this gateway does not. */
    private static String file(JsonObject o, String key) {
        String v = o.string(key, null);
        if (v != null && v.contains("-----BEGIN")) {
            throw new ConfigException(o.at(key), "(inline PEM)", "a file path: inline PEM is not supported, write it to a file");
        }
        return v == null || v.isEmpty() ? null : v;
    }

    /** {@code min_version}/{@code max_version} ({@code TLS1_2}, {@code TLS1_3}, {@code TLS_AUTO}) as a protocol list. */
    private static List<String> protocols(JsonObject o) {
        int min = version(o, "min_version", 2);
        int max = version(o, "max_version", 3);
        if (min > max) {
            throw new ConfigException(o.at("min_version"), o.string("min_version", ""), "a version not above max_version");
        }
        List<String> out = new ArrayList<>();
        if (max >= 3) {
            out.add(UpstreamTlsConfig.TLS_V1_3);
        }
        if (min <= 2) {
            out.add(UpstreamTlsConfig.TLS_V1_2);
        }
        return out;
    }

    private static int version(JsonObject o, String key, int auto) {
        String v = o.string(key, "TLS_AUTO").toUpperCase(Locale.ROOT);
        return switch (v) {
            case "", "TLS_AUTO" -> auto;
            case "TLS1_2" -> 2;
            case "TLS1_3" -> 3;
            default -> throw new ConfigException(o.at(key), v, "\"TLS1_2\", \"TLS1_3\" or \"TLS_AUTO\" (TLS 1.0 and 1.1 are not supported)");
        };
    }
}
