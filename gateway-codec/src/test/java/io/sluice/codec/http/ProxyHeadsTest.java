package io.sluice.codec.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.codec.testing.Bufs;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class ProxyHeadsTest {

    private static final ByteBufAllocator ALLOC = Bufs.ALLOC;

    private static HttpHead decode(boolean request, String text) {
        EmbeddedChannel ch = new EmbeddedChannel(request ? Http1Decoder.requests(4096, 8192)
                : Http1Decoder.responses(4096, 8192));
        ch.writeInbound(Bufs.copied(text));
        HttpHead h = ch.readInbound();
        ch.finishAndReleaseAll();
        return h;
    }

    /** The buffer under every slice and leak-aware wrapper. */
    private static ByteBuf root(ByteBuf b) {
        while (b.unwrap() != null) {
            b = b.unwrap();
        }
        return b;
    }

    private static String text(ByteBuf b) {
        try {
            return b.toString(StandardCharsets.ISO_8859_1);
        } finally {
            b.release();
        }
    }

    @Test
    void anUntouchedRequestKeepsItsLinesAndGainsForwardingHeaders() {
        HttpHead h = decode(true, "GET /a?b HTTP/1.1\r\nHost: shop:8080\r\nAccept: */*\r\nUser-Agent: t\r\n\r\n");
        String out = text(ProxyHeads.requestHead(ALLOC, h, null, null, "10.1.2.3", false));
        h.release();
        assertThat(out).isEqualTo("GET /a?b HTTP/1.1\r\nHost: shop:8080\r\nAccept: */*\r\nUser-Agent: t\r\n"
                + "X-Forwarded-For: 10.1.2.3\r\nX-Forwarded-Proto: http\r\nX-Forwarded-Host: shop:8080\r\n\r\n");
    }

    @Test
    void aRequestHeadNothingChangesIsForwardedAsReceivedWithoutACopy() {
        String head = "GET /a?b HTTP/1.1\r\nHost: shop:8080\r\nAccept:  */* \r\nUser-Agent: t\r\n\r\n";
        HttpHead h = decode(true, head);
        ByteBuf out = ProxyHeads.requestHead(ALLOC, h, null, null, null, false);
        assertThat(out).isNotSameAs(h.raw());
        assertThat(root(out)).isSameAs(root(h.raw())); // the received bytes, not a copy
        assertThat(text(out)).isEqualTo(head);
        assertThat(h.raw().refCnt()).isPositive(); // the caller still owns the head
        assertThat(h.target()).isEqualTo("/a?b");
        h.release();

        HttpHead expect = decode(true, "PUT /u HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n");
        assertThat(text(ProxyHeads.requestHead(ALLOC, expect, null, null, null, true)))
                .isEqualTo("PUT /u HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\n");
        expect.release();
    }

    @Test
    void hopByHopHeadersAndWhatConnectionNamesAreRemoved() {
        HttpHead h = decode(true, "POST /x HTTP/1.0\r\nHost: h\r\nConnection: keep-alive, X-Secret\r\nX-Secret: s\r\n"
                + "Keep-Alive: timeout=5\r\nTE: trailers\r\nProxy-Connection: x\r\nUpgrade: h2c\r\n"
                + "Proxy-Authorization: basic\r\nExpect: 100-continue\r\nContent-Length: 3\r\nX-Forwarded-For: 1.1.1.1\r\n"
                + "X-Forwarded-Proto: https\r\nx-keep: 1\r\n\r\n");
        String out = text(ProxyHeads.requestHead(ALLOC, h, "/rewritten", "10.0.0.9:80", "2.2.2.2", true, true));
        h.release();
        assertThat(out).isEqualTo("POST /rewritten HTTP/1.1\r\nHost: 10.0.0.9:80\r\nContent-Length: 3\r\n"
                + "X-Forwarded-For: 1.1.1.1, 2.2.2.2\r\nX-Forwarded-Proto: https\r\nx-keep: 1\r\n"
                + "X-Forwarded-Host: h\r\n\r\n");
    }

    @Test
    void withoutForwardingHeadersAndWithoutHostAnOverrideIsAppended() {
        HttpHead h = decode(true, "GET / HTTP/1.0\r\nA: 1\r\n\r\n");
        String out = text(ProxyHeads.requestHead(ALLOC, h, null, "up:9000", null, false));
        h.release();
        assertThat(out).isEqualTo("GET / HTTP/1.1\r\nA: 1\r\nHost: up:9000\r\n\r\n");
    }

    @Test
    void anUnchangedResponseHeadIsForwardedAsReceived() {
        HttpHead h = decode(false, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nServer: s\r\n\r\n");
        ByteBuf out = ProxyHeads.responseHead(ALLOC, h, false, false, ProxyHeads.CONNECTION_AS_IS);
        assertThat(out).isSameAs(h.raw());
        assertThat(text(out)).isEqualTo("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nServer: s\r\n\r\n");
    }

    @Test
    void aResponseHeadIsRebuiltForTheClientsConnection() {
        HttpHead h = decode(false, "HTTP/1.0 404 Not Found\r\nConnection: keep-alive\r\nKeep-Alive: timeout=4\r\n"
                + "Content-Type: text/plain\r\n\r\n");
        String out = text(ProxyHeads.responseHead(ALLOC, h, true, false, ProxyHeads.CONNECTION_CLOSE_HEADER));
        h.release();
        assertThat(out).isEqualTo("HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n"
                + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n");

        HttpHead c = decode(false, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nDate: d\r\n\r\n");
        String dechunked = text(ProxyHeads.responseHead(ALLOC, c, false, true, ProxyHeads.CONNECTION_KEEP_ALIVE_HEADER));
        c.release();
        assertThat(dechunked).isEqualTo("HTTP/1.1 200 OK\r\nDate: d\r\nConnection: keep-alive\r\n\r\n");
    }

    @Test
    void bareLineFeedsAndPaddingAreNormalised() {
        HttpHead h = decode(true, "GET / HTTP/1.1\nHost:  h \nA:b\n\n");
        String out = text(ProxyHeads.requestHead(ALLOC, h, null, null, null, false));
        h.release();
        assertThat(out).isEqualTo("GET / HTTP/1.1\r\nHost:  h\r\nA:b\r\n\r\n");
    }

    @Test
    void aResponseHeadWithBareLineFeedsIsRebuiltWithCrlf() {
        HttpHead h = decode(false, "HTTP/1.1 200 OK\nContent-Length: 2\r\nServer: s\n\n");
        ByteBuf out = ProxyHeads.responseHead(ALLOC, h, false, false, ProxyHeads.CONNECTION_AS_IS);
        assertThat(out).isNotSameAs(h.raw());
        h.release();
        assertThat(text(out)).isEqualTo("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nServer: s\r\n\r\n");
    }

    @Test
    void hostAndPathHelpers() {
        assertThat(ProxyHeads.hostWithoutPort("Shop.Example:8080")).isEqualTo("shop.example");
        assertThat(ProxyHeads.hostWithoutPort("[::1]:80")).isEqualTo("[::1]");
        assertThat(ProxyHeads.pathOf("/a/b?c#d")).isEqualTo("/a/b");
        assertThat(ProxyHeads.pathOf("http://h:1/p?q")).isEqualTo("/p");
    }

    @Test
    void fromAnUntrustedPeerForwardingHeadersAreReplacedNotPassedOn() {
        HttpHead h = decode(true, "GET /a HTTP/1.1\r\nHost: shop\r\nX-Forwarded-For: 6.6.6.6\r\n"
                + "X-Forwarded-Proto: https\r\nX-Forwarded-Host: admin.internal\r\nForwarded: for=6.6.6.6;proto=https\r\n"
                + "Accept: */*\r\nx-forwarded-for: 7.7.7.7\r\n\r\n");
        String out = text(ProxyHeads.requestHead(ALLOC, h, null, null, "10.1.2.3", false, false));
        assertThat(out).isEqualTo("GET /a HTTP/1.1\r\nHost: shop\r\nAccept: */*\r\n"
                + "X-Forwarded-For: 10.1.2.3\r\nX-Forwarded-Proto: http\r\nX-Forwarded-Host: shop\r\n\r\n");
        // from a trusted proxy: kept, the address appended to the last X-Forwarded-For
        String trusted = text(ProxyHeads.requestHead(ALLOC, h, null, null, "10.1.2.3", true, false));
        h.release();
        assertThat(trusted).isEqualTo("GET /a HTTP/1.1\r\nHost: shop\r\nX-Forwarded-For: 6.6.6.6\r\n"
                + "X-Forwarded-Proto: https\r\nX-Forwarded-Host: admin.internal\r\nForwarded: for=6.6.6.6;proto=https\r\n"
                + "Accept: */*\r\nx-forwarded-for: 7.7.7.7, 10.1.2.3\r\n\r\n");
    }

    @Test
    void anAbsoluteFormRequestGoesUpInOriginFormWithTheTargetsAuthorityAsHost() {
        HttpHead h = decode(true, "GET http://internal.example:8080/p/../q?x=1 HTTP/1.1\r\nHost: public.example\r\nA: 1\r\n\r\n");
        assertThat(h.authority()).isEqualTo("internal.example:8080");
        String out = text(ProxyHeads.requestHead(ALLOC, h, null, null, "10.1.2.3", false, false));
        assertThat(out).isEqualTo("GET /q?x=1 HTTP/1.1\r\nHost: internal.example:8080\r\nA: 1\r\n"
                + "X-Forwarded-For: 10.1.2.3\r\nX-Forwarded-Proto: http\r\nX-Forwarded-Host: internal.example:8080\r\n\r\n");
        // preserve_host false: the upstream address, as for any request
        String up = text(ProxyHeads.requestHead(ALLOC, h, null, "10.0.0.9:80", null, false, false));
        h.release();
        assertThat(up).isEqualTo("GET /q?x=1 HTTP/1.1\r\nHost: 10.0.0.9:80\r\nA: 1\r\n\r\n");

        HttpHead old = decode(true, "GET HTTPS://a.example HTTP/1.0\r\n\r\n");
        String fromOld = text(ProxyHeads.requestHead(ALLOC, old, null, null, null, false, false));
        old.release();
        assertThat(fromOld).isEqualTo("GET / HTTP/1.1\r\nHost: a.example\r\n\r\n");
    }

    @Test
    void framingHeadersGoUpInCanonicalForm() {
        HttpHead te = decode(true, "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\tChunked \r\nA: 1\r\n\r\n");
        assertThat(te.hasHopByHop()).isTrue();
        assertThat(text(ProxyHeads.requestHead(ALLOC, te, null, null, null, false, false)))
                .isEqualTo("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nA: 1\r\n\r\n");
        te.release();
        HttpHead cl = decode(true, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length:\t0035\r\n\r\n");
        assertThat(text(ProxyHeads.requestHead(ALLOC, cl, null, null, null, false, false)))
                .isEqualTo("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 35\r\n\r\n");
        cl.release();
        HttpHead plain = decode(true, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1234567890\r\n\r\n");
        assertThat(plain.hasHopByHop()).isFalse();
        assertThat(text(ProxyHeads.requestHead(ALLOC, plain, null, null, "1.2.3.4", false, false)))
                .startsWith("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1234567890\r\nX-Forwarded-For: 1.2.3.4\r\n");
        plain.release();
    }
}
