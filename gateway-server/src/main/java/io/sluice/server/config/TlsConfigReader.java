package io.sluice.server.config;

import io.sluice.core.config.CertificateConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.TlsConfig;

import java.time.Duration;
import java.util.List;

/** Reads a listener's native {@code tls} block (docs/config.md, docs/tls.md). */
final class TlsConfigReader {

    private TlsConfigReader() {
    }

    /** Null when the block is absent (cleartext). */
    static TlsConfig read(JsonObject o, Protocol protocol) {
        return read(o, protocol, false);
    }

    /** As {@link #read(JsonObject, Protocol)}; {@code http2}: the listener accepts HTTP/2, so ALPN offers {@code h2} first by default. */
    static TlsConfig read(JsonObject o, Protocol protocol, boolean http2) {
        if (o == null) {
            return null;
        }
        List<CertificateConfig> certs = o.array("certificates", (n, p) -> certificate(JsonObject.of(n, p)));
        List<String> protocols = o.has("protocols") ? o.strings("protocols") : null;
        List<String> ciphers = o.strings("cipher_suites");
        List<String> alpn = o.has("alpn") ? o.strings("alpn") : defaultAlpn(protocol, http2);
        TlsConfig.ClientAuth clientAuth = clientAuth(o);
        String clientCa = o.string("client_ca", null);
        Duration handshake = o.duration("handshake_timeout", null);
        boolean tickets = o.bool("session_tickets", true);
        Duration rotation = o.duration("ticket_key_rotation", null);
        String header = o.string("identity_header", null);
        boolean forward = o.bool("forward_identity", false);
        boolean watch = o.bool("watch_files", true);
        Duration interval = o.duration("watch_interval", null);
        boolean plaintext = o.bool("allow_plaintext", false);
        if (plaintext && protocol != Protocol.AUTO) {
            throw new ConfigException(o.at("allow_plaintext"), true, "false (only auto listeners can tell TLS from cleartext)");
        }
        o.finish();
        TlsConfig tls = ConfigLoader.build(o.path(), () -> new TlsConfig(certs, protocols, ciphers, alpn, clientAuth, clientCa,
                handshake, tickets, rotation, header, forward, watch, interval, plaintext));
        validate(tls, o.path().substring(0, o.path().length() - ".tls".length()));
        return tls;
    }

    /** Loads the files of {@code tls} now (key, password, chain, expiry), errors placed under the listener path {@code at}. */
    static void validate(TlsConfig tls, String at) {
        ConfigLoader.build(at, () -> {
            io.sluice.server.tls.TlsSnapshot.validateFiles(tls);
            return tls;
        });
    }

    /** Renders {@code tls} in the native format; passwords are shown as {@code ***}. */
    static void render(com.fasterxml.jackson.databind.node.ObjectNode o, TlsConfig t) {
        com.fasterxml.jackson.databind.node.ArrayNode certs = o.putArray("certificates");
        for (CertificateConfig c : t.certificates()) {
            com.fasterxml.jackson.databind.node.ObjectNode n = certs.addObject();
            if (c.pkcs12() != null) {
                n.put("pkcs12", c.pkcs12());
            } else {
                n.put("cert_chain", c.certChain()).put("private_key", c.privateKey());
            }
            if (c.password() != null) {
                n.put("password", "***");
            }
            com.fasterxml.jackson.databind.node.ArrayNode names = n.putArray("server_names");
            c.serverNames().forEach(names::add);
        }
        com.fasterxml.jackson.databind.node.ArrayNode p = o.putArray("protocols");
        t.protocols().forEach(p::add);
        com.fasterxml.jackson.databind.node.ArrayNode cs = o.putArray("cipher_suites");
        t.cipherSuites().forEach(cs::add);
        com.fasterxml.jackson.databind.node.ArrayNode alpn = o.putArray("alpn");
        t.alpn().forEach(alpn::add);
        o.put("client_auth", t.clientAuth().jsonName());
        if (t.clientCa() != null) {
            o.put("client_ca", t.clientCa());
        }
        o.put("handshake_timeout", io.sluice.core.config.DurationFormat.format(t.handshakeTimeout()))
                .put("session_tickets", t.sessionTickets())
                .put("ticket_key_rotation", io.sluice.core.config.DurationFormat.format(t.ticketKeyRotation()))
                .put("identity_header", t.identityHeader()).put("forward_identity", t.forwardIdentity())
                .put("watch_files", t.watchFiles())
                .put("watch_interval", io.sluice.core.config.DurationFormat.format(t.watchInterval()))
                .put("allow_plaintext", t.allowPlaintext());
    }

    /** ALPN advertised when the config leaves it out: http/1.1 where HTTP is spoken, nothing on Bolt listeners. */
    static List<String> defaultAlpn(Protocol protocol) {
        return defaultAlpn(protocol, false);
    }

    /** As {@link #defaultAlpn(Protocol)}, with {@code h2} first when the listener accepts HTTP/2 (docs/http2.md). */
    static List<String> defaultAlpn(Protocol protocol, boolean http2) {
        if (protocol == Protocol.BOLT) {
            return List.of();
        }
        return http2 ? List.of(io.sluice.server.http2.H2cPrefaceSniffer.ALPN_H2, TlsConfig.ALPN_HTTP_1_1)
                : List.of(TlsConfig.ALPN_HTTP_1_1);
    }

    private static TlsConfig.ClientAuth clientAuth(JsonObject o) {
        String s = o.string("client_auth", "none");
        return switch (s) {
            case "none" -> TlsConfig.ClientAuth.NONE;
            case "optional" -> TlsConfig.ClientAuth.OPTIONAL;
            case "require" -> TlsConfig.ClientAuth.REQUIRE;
            default -> throw new ConfigException(o.at("client_auth"), s, "\"none\", \"optional\" or \"require\"");
        };
    }

    private static CertificateConfig certificate(JsonObject o) {
        String chain = o.string("cert_chain", null);
        String key = o.string("private_key", null);
        String p12 = o.string("pkcs12", null);
        String password = o.string("password", null);
        List<String> names = o.strings("server_names");
        o.finish();
        return ConfigLoader.build(o.path(), () -> new CertificateConfig(chain, key, p12, password, names));
    }
}
