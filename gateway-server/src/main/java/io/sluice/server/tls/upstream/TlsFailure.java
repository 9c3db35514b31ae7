package io.sluice.server.tls.upstream;

import io.netty.handler.ssl.SslHandshakeTimeoutException;

import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.util.Locale;

/**
 * Why an upstream TLS handshake failed, from the exception the SSL engine reported: a short
 * metric tag and the words an operator reads in the 502 body and the log line. The JDK trust
 * manager does the verification for both providers (Netty wraps it for OpenSSL), so the causes are
 * the JDK's certificate exceptions; alerts the upstream sent come back as text.
 */
final class TlsFailure {

    static final String EXPIRED = "expired";
    static final String NOT_YET_VALID = "not_yet_valid";
    static final String WRONG_HOST = "wrong_host";
    static final String UNKNOWN_CA = "unknown_ca";
    static final String CLIENT_CERT_REJECTED = "client_cert_rejected";
    static final String PROTOCOL = "protocol";
    static final String TIMEOUT = "timeout";
    static final String NO_CONTEXT = "no_context";
    static final String OTHER = "other";

    final String reason;
    final String words;

    private TlsFailure(String reason, String words) {
        this.reason = reason;
        this.words = words;
    }

    /** Classifies {@code cause}; {@code peer} is the name the certificate was checked against. */
    static TlsFailure of(Throwable cause, String peer) {
        StringBuilder texts = new StringBuilder();
        for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof UpstreamTlsException u) {
                return new TlsFailure(u.reason(), u.getMessage());
            }
            if (t instanceof SslHandshakeTimeoutException) {
                return new TlsFailure(TIMEOUT, "handshake timed out");
            }
            if (t instanceof CertificateExpiredException) {
                return new TlsFailure(EXPIRED, "certificate expired (" + t.getMessage() + ")");
            }
            if (t instanceof CertificateNotYetValidException) {
                return new TlsFailure(NOT_YET_VALID, "certificate not yet valid (" + t.getMessage() + ")");
            }
            if (t instanceof CertPathValidatorException v) {
                if (v.getReason() == CertPathValidatorException.BasicReason.EXPIRED) {
                    return new TlsFailure(EXPIRED, "certificate expired");
                }
                if (v.getReason() == CertPathValidatorException.BasicReason.NOT_YET_VALID) {
                    return new TlsFailure(NOT_YET_VALID, "certificate not yet valid");
                }
            }
            if (t.getMessage() != null) {
                texts.append(t.getMessage()).append(" | ");
            }
        }
        String all = texts.toString();
        String lower = all.toLowerCase(Locale.ROOT);
        if (lower.contains("no subject alternative") || lower.contains("no name matching")
                || lower.contains("does not match") || lower.contains("hostname")) {
            return new TlsFailure(WRONG_HOST, "certificate does not name " + peer);
        }
        if (lower.contains("unable to find valid certification path") || lower.contains("pkix path building failed")
                || lower.contains("unknown_ca") || lower.contains("unknown ca")
                || lower.contains("no trust anchor") || lower.contains("certpathvalidatorexception")
                || lower.contains("path does not chain") || lower.contains("signature check failed")) {
            return new TlsFailure(UNKNOWN_CA, "certificate not signed by a trusted CA");
        }
        if (lower.contains("expired")) {
            return new TlsFailure(EXPIRED, "certificate expired");
        }
        if (lower.contains("not yet valid")) {
            return new TlsFailure(NOT_YET_VALID, "certificate not yet valid");
        }
        if (lower.contains("certificate_required") || lower.contains("bad_certificate") || lower.contains("bad certificate")
                || lower.contains("certificate required")) {
            return new TlsFailure(CLIENT_CERT_REJECTED, "the upstream rejected the client certificate (or wanted one)");
        }
        if (lower.contains("protocol_version") || lower.contains("handshake_failure") || lower.contains("no_cipher")
                || lower.contains("no appropriate protocol") || lower.contains("no cipher") || lower.contains("wrong_version")
                || lower.contains("not an ssl/tls record")) {
            return new TlsFailure(PROTOCOL, "no common protocol or cipher (" + first(all) + ")");
        }
        return new TlsFailure(OTHER, "handshake failed (" + first(all) + ")");
    }

    private static String first(String all) {
        int bar = all.indexOf(" | ");
        String s = bar < 0 ? all : all.substring(0, bar);
        return s.isEmpty() ? "no detail" : s.length() > 200 ? s.substring(0, 200) : s;
    }
}
