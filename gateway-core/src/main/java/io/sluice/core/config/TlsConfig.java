package io.sluice.core.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Downstream TLS of a listener ({@code tls} on a listener; null there = cleartext).
 *
 * @param certificates       server certificates; the first is the default (no SNI, unknown SNI),
 *                           the others are chosen by their {@code server_names}
 * @param protocols          enabled protocol versions: {@code TLSv1.2}, {@code TLSv1.3}
 * @param cipherSuites       TLS 1.2 cipher suites (OpenSSL or IANA names as the provider takes
 *                           them); empty = the provider's defaults
 * @param alpn               protocols advertised by ALPN, in preference order; empty = none. The
 *                           loader defaults it to {@code http/1.1} on HTTP and auto listeners
 * @param clientAuth         client certificates: none, optional (verified when sent) or required
 * @param clientCa           PEM bundle of the CAs client certificates must chain to (with a clientAuth)
 * @param handshakeTimeout   a connection that has not finished its handshake by then is closed
 * @param sessionTickets     session resumption with tickets (OpenSSL provider)
 * @param ticketKeyRotation  how often a new ticket key is made; tickets under the previous key still resume
 * @param identityHeader     the request header that carries the verified client identity upstream; an
 *                           incoming copy is always removed
 * @param forwardIdentity    whether the gateway sets {@code identityHeader} on requests with a verified
 *                           client certificate
 * @param watchFiles         whether the certificate and key files are polled and reloaded when replaced
 * @param watchInterval      how often they are polled
 * @param allowPlaintext     auto listeners only: whether a connection that does not start with a TLS
 *                           ClientHello is served in cleartext (false: closed)
 */
public record TlsConfig(List<CertificateConfig> certificates, List<String> protocols, List<String> cipherSuites,
                        List<String> alpn, ClientAuth clientAuth, String clientCa, Duration handshakeTimeout,
                        boolean sessionTickets, Duration ticketKeyRotation, String identityHeader,
                        boolean forwardIdentity, boolean watchFiles, Duration watchInterval, boolean allowPlaintext) {

    /** Whether and how client certificates are asked for. */
    public enum ClientAuth {
        NONE, OPTIONAL, REQUIRE;

        public String jsonName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public static final List<String> DEFAULT_PROTOCOLS = List.of("TLSv1.2", "TLSv1.3");
    public static final Set<String> SUPPORTED_PROTOCOLS = Set.of("TLSv1.2", "TLSv1.3");
    public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration DEFAULT_TICKET_KEY_ROTATION = Duration.ofHours(1);
    public static final String DEFAULT_IDENTITY_HEADER = "x-forwarded-client-cert";
    public static final Duration DEFAULT_WATCH_INTERVAL = Duration.ofSeconds(5);
    /** ALPN id of HTTP/1.1 (HTTP/2 adds {@code h2} in front once it lands). */
    public static final String ALPN_HTTP_1_1 = "http/1.1";

    public TlsConfig {
        certificates = Checks.list(certificates);
        if (certificates.isEmpty()) {
            throw new ConfigException("certificates", "[]", "at least one certificate (the first is the default)");
        }
        protocols = protocols == null || protocols.isEmpty() ? DEFAULT_PROTOCOLS : List.copyOf(protocols);
        for (int i = 0; i < protocols.size(); i++) {
            if (!SUPPORTED_PROTOCOLS.contains(protocols.get(i))) {
                throw new ConfigException("protocols[" + i + "]", protocols.get(i), "\"TLSv1.2\" or \"TLSv1.3\"");
            }
        }
        cipherSuites = Checks.list(cipherSuites);
        alpn = Checks.list(alpn);
        for (int i = 0; i < alpn.size(); i++) {
            Checks.notBlank("alpn[" + i + "]", alpn.get(i));
        }
        clientAuth = clientAuth == null ? ClientAuth.NONE : clientAuth;
        if (clientAuth != ClientAuth.NONE && (clientCa == null || clientCa.isBlank())) {
            throw new ConfigException("client_ca", clientCa, "a PEM CA bundle file (client_auth is " + clientAuth.jsonName() + ")");
        }
        handshakeTimeout = Checks.positive("handshake_timeout",
                handshakeTimeout == null ? DEFAULT_HANDSHAKE_TIMEOUT : handshakeTimeout);
        ticketKeyRotation = Checks.positive("ticket_key_rotation",
                ticketKeyRotation == null ? DEFAULT_TICKET_KEY_ROTATION : ticketKeyRotation);
        identityHeader = identityHeader == null ? DEFAULT_IDENTITY_HEADER : Checks.notBlank("identity_header", identityHeader)
                .toLowerCase(java.util.Locale.ROOT);
        if (forwardIdentity && clientAuth == ClientAuth.NONE) {
            throw new ConfigException("forward_identity", true, "false, or a client_auth (no client certificate is asked for)");
        }
        watchInterval = Checks.positive("watch_interval", watchInterval == null ? DEFAULT_WATCH_INTERVAL : watchInterval);
    }

    /** Every file the listener reads: certificates, keys, PKCS#12 stores, the client CA bundle. */
    public List<String> files() {
        List<String> f = new ArrayList<>();
        for (CertificateConfig c : certificates) {
            if (c.pkcs12() != null) {
                f.add(c.pkcs12());
            } else {
                f.add(c.certChain());
                f.add(c.privateKey());
            }
        }
        if (clientCa != null) {
            f.add(clientCa);
        }
        return f;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.certificates = certificates;
        b.protocols = protocols;
        b.cipherSuites = cipherSuites;
        b.alpn = alpn;
        b.clientAuth = clientAuth;
        b.clientCa = clientCa;
        b.handshakeTimeout = handshakeTimeout;
        b.sessionTickets = sessionTickets;
        b.ticketKeyRotation = ticketKeyRotation;
        b.identityHeader = identityHeader;
        b.forwardIdentity = forwardIdentity;
        b.watchFiles = watchFiles;
        b.watchInterval = watchInterval;
        b.allowPlaintext = allowPlaintext;
        return b;
    }

    /** Defaults: TLS 1.2 + 1.3, ALPN http/1.1, no client certificates, 10 s handshake timeout, tickets on, files watched. */
    public static final class Builder {
        private List<CertificateConfig> certificates = List.of();
        private List<String> protocols = DEFAULT_PROTOCOLS;
        private List<String> cipherSuites = List.of();
        private List<String> alpn = List.of(ALPN_HTTP_1_1);
        private ClientAuth clientAuth = ClientAuth.NONE;
        private String clientCa;
        private Duration handshakeTimeout = DEFAULT_HANDSHAKE_TIMEOUT;
        private boolean sessionTickets = true;
        private Duration ticketKeyRotation = DEFAULT_TICKET_KEY_ROTATION;
        private String identityHeader = DEFAULT_IDENTITY_HEADER;
        private boolean forwardIdentity;
        private boolean watchFiles = true;
        private Duration watchInterval = DEFAULT_WATCH_INTERVAL;
        private boolean allowPlaintext;

        private Builder() {
        }

        public Builder certificates(List<CertificateConfig> v) {
            certificates = v;
            return this;
        }

        public Builder certificates(CertificateConfig... v) {
            certificates = List.of(v);
            return this;
        }

        public Builder protocols(String... v) {
            protocols = List.of(v);
            return this;
        }

        public Builder protocols(List<String> v) {
            protocols = v;
            return this;
        }

        public Builder cipherSuites(List<String> v) {
            cipherSuites = v;
            return this;
        }

        public Builder alpn(List<String> v) {
            alpn = v;
            return this;
        }

        public Builder clientAuth(ClientAuth v, String caBundle) {
            clientAuth = v;
            clientCa = caBundle;
            return this;
        }

        public Builder handshakeTimeout(Duration v) {
            handshakeTimeout = v;
            return this;
        }

        public Builder sessionTickets(boolean v) {
            sessionTickets = v;
            return this;
        }

        public Builder ticketKeyRotation(Duration v) {
            ticketKeyRotation = v;
            return this;
        }

        public Builder identityHeader(String v) {
            identityHeader = v;
            return this;
        }

        public Builder forwardIdentity(boolean v) {
            forwardIdentity = v;
            return this;
        }

        public Builder watchFiles(boolean v) {
            watchFiles = v;
            return this;
        }

        public Builder watchInterval(Duration v) {
            watchInterval = v;
            return this;
        }

        public Builder allowPlaintext(boolean v) {
            allowPlaintext = v;
            return this;
        }

        public TlsConfig build() {
            return new TlsConfig(certificates, protocols, cipherSuites, alpn, clientAuth, clientCa, handshakeTimeout,
                    sessionTickets, ticketKeyRotation, identityHeader, forwardIdentity, watchFiles, watchInterval,
                    allowPlaintext);
        }
    }
}
