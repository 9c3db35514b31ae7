package io.sluice.server.tls;

import io.netty.util.AttributeKey;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.CertificateEncodingException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;

/**
 * The verified client certificate of a TLS connection (mTLS): computed once after the handshake
 * and kept on the channel ({@link #KEY}) for routing, the identity header and the access log.
 *
 * @param subject     the subject DN (RFC 2253)
 * @param sans        subject alternative names, typed: {@code DNS:a.example}, {@code IP:10.0.0.1},
 *                    {@code URI:spiffe://x/y}, {@code email:a@example}
 * @param fingerprint SHA-256 of the DER certificate, lower-case hex
 */
public record PeerIdentity(String subject, List<String> sans, String fingerprint) {

    /** The verified identity of the connection's client, absent without a client certificate. */
    public static final AttributeKey<PeerIdentity> KEY = AttributeKey.valueOf("sluice.tls.peer");

    public PeerIdentity {
        sans = List.copyOf(sans);
    }

    /** Reads subject, SANs and fingerprint of a client's leaf certificate. */
    public static PeerIdentity of(X509Certificate leaf) {
        List<String> sans = new ArrayList<>();
        try {
            Collection<List<?>> alt = leaf.getSubjectAlternativeNames();
            if (alt != null) {
                for (List<?> e : alt) {
                    int type = (Integer) e.get(0);
                    Object v = e.get(1);
                    String kind = switch (type) {
                        case 1 -> "email";
                        case 2 -> "DNS";
                        case 6 -> "URI";
                        case 7 -> "IP";
                        default -> null;
                    };
                    if (kind != null && v instanceof String s) {
                        sans.add(kind + ":" + s);
                    }
                }
            }
        } catch (CertificateParsingException e) {
            // no SANs
        }
        String fp;
        try {
            fp = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(leaf.getEncoded()));
        } catch (NoSuchAlgorithmException | CertificateEncodingException e) {
            fp = "";
        }
        return new PeerIdentity(leaf.getSubjectX500Principal().getName(), sans, fp);
    }

    /**
     * The identity header's value, in the manner of Envoy's XFCC:
     * {@code Hash=<sha256>;Subject="<dn>";DNS=a;URI=b} (quotes and backslashes in the subject escaped).
     */
    public String headerValue() {
        StringBuilder b = new StringBuilder("Hash=").append(fingerprint)
                .append(";Subject=\"").append(subject.replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
        for (String s : sans) {
            int colon = s.indexOf(':');
            b.append(';').append(s, 0, colon).append('=').append(s, colon + 1, s.length());
        }
        return b.toString();
    }

    /**
     * Whether {@code name} names this client: a typed SAN ({@code DNS:a.example}) or its value
     * alone, the subject DN, its CN, or the fingerprint.
     */
    public boolean matches(String name) {
        if (sans.contains(name) || fingerprint.equalsIgnoreCase(name) || subject.equals(name)
                || subject.startsWith("CN=" + name + ",") || subject.equals("CN=" + name)) {
            return true;
        }
        for (String s : sans) {
            if (s.endsWith(name) && s.length() == name.length() + s.indexOf(':') + 1) {
                return true;
            }
        }
        return false;
    }
}
