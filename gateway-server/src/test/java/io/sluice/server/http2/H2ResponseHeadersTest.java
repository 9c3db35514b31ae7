package io.sluice.server.http2;

import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http2.Http2Headers;
import io.sluice.codec.http.Http1Decoder;
import io.sluice.codec.http.HttpHead;
import io.sluice.codec.testing.Bufs;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** An HTTP/1.1 response head becomes an h2 header list (RFC 9113 §8.2): lower-case names, values as sent, hop fields dropped. */
class H2ResponseHeadersTest {

    private static Http2Headers translate(String head) {
        EmbeddedChannel ch = new EmbeddedChannel(Http1Decoder.responses(4096, 8192));
        ch.writeInbound(Bufs.copied(head));
        HttpHead h = ch.readInbound();
        try {
            return H2Translation.responseHeaders(h);
        } finally {
            h.release();
            ch.finishAndReleaseAll();
        }
    }

    private static List<String> fields(Http2Headers h) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<CharSequence, CharSequence> e : h) {
            out.add(e.getKey() + "=" + e.getValue());
        }
        return out;
    }

    @Test
    void namesAreLowerCaseValuesAsSentAndHopFieldsDropped() {
        Http2Headers h = translate("HTTP/1.1 200 OK\r\nServer: nginx/1.22\r\nDATE: Wed, 25 Nov 2026 02:00:00 GMT\r\n"
                + "Content-Type: text/Plain\r\nX-Custom-Field: Mixed Case\r\nConnection: keep-alive, X-Hop\r\n"
                + "X-Hop: 1\r\nKeep-Alive: timeout=5\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 0\r\n\r\n");
        assertThat(h.status().toString()).isEqualTo("200");
        assertThat(fields(h)).containsExactly(":status=200", "server=nginx/1.22", "date=Wed, 25 Nov 2026 02:00:00 GMT",
                "content-type=text/Plain", "x-custom-field=Mixed Case", "set-cookie=a=1", "set-cookie=b=2",
                "content-length=0");
    }

    @Test
    void anUnusualStatusAndNameLengthsMatchingAKnownNameAreKept() {
        Http2Headers h = translate("HTTP/1.1 299 Whatever\r\nServes: x\r\nDatE: d\r\nContent-Length: 0\r\n\r\n");
        assertThat(fields(h)).containsExactly(":status=299", "serves=x", "date=d", "content-length=0");
    }
}
