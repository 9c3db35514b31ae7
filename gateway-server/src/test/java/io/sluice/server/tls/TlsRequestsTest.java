package io.sluice.server.tls;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.codec.testing.Bufs;
import io.sluice.core.config.TlsConfig;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The identity header on the upstream head: always stripped, set when forwarded; X-Forwarded-Proto https. */
class TlsRequestsTest {

    static final PeerIdentity ID = new PeerIdentity("CN=client-a", List.of("DNS:client-a.test", "URI:spiffe://t/a"), "ab12");

    static TlsRequests requests(boolean forward, PeerIdentity id) {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.attr(PeerIdentity.KEY).set(id);
        TlsRequests r = new TlsRequests(TlsConfig.DEFAULT_IDENTITY_HEADER, id == null ? null : id.headerValue(), forward);
        ch.finishAndReleaseAll();
        return r;
    }

    static String rewrite(TlsRequests r, String head) {
        ByteBuf in = Bufs.copied(head);
        ByteBuf out = r.rewrite(Bufs.ALLOC, in);
        String s = out.toString(StandardCharsets.ISO_8859_1);
        out.release();
        return s;
    }

    @Test
    void aHeadWithoutTheHeaderIsPassedOnAsItIs() {
        TlsRequests r = requests(false, null);
        ByteBuf in = Bufs.copied("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        ByteBuf out = r.rewrite(Bufs.ALLOC, in);
        assertThat(out).isSameAs(in);
        out.release();
    }

    @Test
    void everyClientCopyIsRemovedWhateverItsCase() {
        assertThat(rewrite(requests(false, null), "GET / HTTP/1.1\r\nX-Forwarded-Client-Cert: forged\r\nHost: a\r\n"
                + "x-forwarded-client-cert: again\r\nX-Forwarded-Client-Cert-Other: kept\r\n\r\n"))
                .isEqualTo("GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-Client-Cert-Other: kept\r\n\r\n");
    }

    @Test
    void theVerifiedIdentityIsAddedWhenForwarded() {
        assertThat(rewrite(requests(true, ID), "GET / HTTP/1.1\r\nHost: a\r\nx-forwarded-client-cert: forged\r\n\r\n"))
                .isEqualTo("GET / HTTP/1.1\r\nHost: a\r\nx-forwarded-client-cert: Hash=ab12;Subject=\"CN=client-a\";"
                        + "DNS=client-a.test;URI=spiffe://t/a\r\n\r\n");
        assertThat(rewrite(requests(true, null), "GET / HTTP/1.1\r\nHost: a\r\n\r\n"))
                .as("no certificate: nothing to forward").isEqualTo("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
    }

    @Test
    void theGatewaysForwardedProtoSaysHttps() {
        assertThat(rewrite(requests(false, null), "GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 1.2.3.4\r\n"
                + "X-Forwarded-Proto: http\r\n\r\n"))
                .isEqualTo("GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 1.2.3.4\r\nX-Forwarded-Proto: https\r\n\r\n");
    }

    @Test
    void routesSeeTheVerifiedIdentityNeverTheClientsCopy() {
        Map<String, String> received = Map.of("x-forwarded-client-cert", "forged", "host", "a");
        assertThat(requests(false, ID).headers(received::get).apply("X-Forwarded-Client-Cert")).startsWith("Hash=ab12;");
        assertThat(requests(false, null).headers(received::get).apply("x-forwarded-client-cert")).isNull();
        assertThat(requests(false, null).headers(received::get).apply("host")).isEqualTo("a");
    }

    @Test
    void anIdentityMatchesByTypedOrBareSanCnOrFingerprint() {
        assertThat(ID.matches("DNS:client-a.test")).isTrue();
        assertThat(ID.matches("client-a.test")).isTrue();
        assertThat(ID.matches("spiffe://t/a")).isTrue();
        assertThat(ID.matches("client-a")).isTrue();
        assertThat(ID.matches("AB12")).isTrue();
        assertThat(ID.matches("t/a")).isFalse();
        assertThat(ID.matches("client-b")).isFalse();
    }
}
