package io.sluice.codec.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.sluice.codec.testing.Bufs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class Http1DecoderTest {

    private static final String GET = "GET /a?b=1 HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\n\r\n";
    private static final String CHUNKED_POST = "POST /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5\r\nhello\r\n1a;ext=1\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Trailer: t\r\n\r\n";
    private static final String CL_POST = "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world";

    private static EmbeddedChannel requests() {
        return new EmbeddedChannel(Http1Decoder.requests(4096, 8192));
    }

    private static EmbeddedChannel responses() {
        return new EmbeddedChannel(Http1Decoder.responses(4096, 8192));
    }

    private static ByteBuf buf(String s) {
        return Bufs.copied(s);
    }

    private static List<Object> drain(EmbeddedChannel ch) {
        List<Object> out = new ArrayList<>();
        Object m;
        while ((m = ch.readInbound()) != null) {
            out.add(m);
        }
        return out;
    }

    private static void releaseAll(List<Object> msgs) {
        msgs.forEach(ReferenceCountUtil::release);
    }

    @Test
    void indexesARequestHeadWithoutCopyingIt() {
        EmbeddedChannel ch = requests();
        ch.writeInbound(buf(GET));
        List<Object> msgs = drain(ch);
        assertThat(msgs).hasSize(1);
        HttpHead h = (HttpHead) msgs.get(0);
        assertThat(h.isRequest()).isTrue();
        assertThat(h.method()).isSameAs("GET");
        assertThat(h.target()).isEqualTo("/a?b=1");
        assertThat(h.isHttp10()).isFalse();
        assertThat(h.isComplete()).isTrue();
        assertThat(h.isKeepAlive()).isTrue();
        assertThat(h.headerCount()).isEqualTo(2);
        assertThat(h.header("host")).isEqualTo("example.com:8080");
        assertThat(h.header("ACCEPT")).isEqualTo("*/*");
        assertThat(h.header("missing")).isNull();
        assertThat(h.kind(h.indexOf("Host"))).isEqualTo(HttpHead.HOST);
        assertThat(h.hasHopByHop()).isFalse();
        assertThat(h.raw().toString(StandardCharsets.ISO_8859_1)).isEqualTo(GET);
        h.release();
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void headsLargerAndSmallerThanTheKeptScratchArrayParseAlike() {
        EmbeddedChannel ch = new EmbeddedChannel(Http1Decoder.requests(4096, 300_000));
        String filler = "v".repeat(1000);
        StringBuilder big = new StringBuilder("GET /big HTTP/1.1\r\nHost: h\r\n");
        for (int i = 0; big.length() < 2 * Http1Decoder.MAX_KEPT_SCRATCH; i++) {
            big.append("X-Fill-").append(i).append(": ").append(filler).append("\r\n");
        }
        big.append("X-Last: tail\r\n\r\n");
        String medium = "GET /medium HTTP/1.1\r\nHost: m\r\nX-Pad: " + "p".repeat(5000) + "\r\n\r\n";
        for (String head : List.of(GET, big.toString(), medium, GET)) {
            ch.writeInbound(buf(head));
            List<Object> msgs = drain(ch);
            assertThat(msgs).hasSize(1);
            HttpHead h = (HttpHead) msgs.get(0);
            assertThat(h.raw().toString(StandardCharsets.ISO_8859_1)).isEqualTo(head);
            assertThat(h.target()).isEqualTo(head.substring(4, head.indexOf(' ', 4)));
            if (head == medium) {
                assertThat(h.header("x-pad")).hasSize(5000);
            } else if (head != GET) {
                assertThat(h.header("x-last")).isEqualTo("tail");
                assertThat(h.header("x-fill-0")).isEqualTo(filler);
            }
            h.release();
        }
        assertThat(ch.finish()).isFalse();
    }

    @Test
    void pipelinedMessagesSplitAtEveryByteComeOutIntact() {
        String all = GET + CHUNKED_POST + CL_POST + GET;
        for (int split = 1; split < all.length(); split++) {
            EmbeddedChannel ch = requests();
            ch.writeInbound(buf(all.substring(0, split)));
            ch.writeInbound(buf(all.substring(split)));
            List<Object> msgs = drain(ch);
            assertThat(reassemble(msgs)).as("split at %d", split).isEqualTo(all);
            assertThat(msgs.stream().filter(m -> m instanceof HttpHead).count()).isEqualTo(4);
            assertThat(msgs.stream().filter(m -> m instanceof HttpBody b && b.isLast()).count()).isEqualTo(2);
            assertThat(msgs.stream().mapToInt(m -> m instanceof HttpBody b ? b.payloadBytes() : 0).sum())
                    .isEqualTo(5 + 26 + 11);
            releaseAll(msgs);
            ch.finish();
        }
    }

    @Test
    void aHeadArrivingOneByteAtATimeIsParsedOnce() {
        EmbeddedChannel ch = requests();
        String all = CHUNKED_POST;
        for (char c : all.toCharArray()) {
            ch.writeInbound(buf(String.valueOf(c)));
        }
        List<Object> msgs = drain(ch);
        assertThat(reassemble(msgs)).isEqualTo(all);
        assertThat(((HttpHead) msgs.get(0)).isChunked()).isTrue();
        assertThat(msgs.get(msgs.size() - 1)).isInstanceOfSatisfying(HttpBody.class, b -> assertThat(b.isLast()).isTrue());
        releaseAll(msgs);
    }

    private static String reassemble(List<Object> msgs) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Object m : msgs) {
            ByteBuf b = m instanceof HttpHead h ? h.raw() : ((HttpBody) m).content();
            byte[] bytes = new byte[b.readableBytes()];
            b.getBytes(b.readerIndex(), bytes);
            out.writeBytes(bytes);
        }
        return out.toString(StandardCharsets.ISO_8859_1);
    }

    @Test
    void connectionAndHopByHopHeadersAreFlagged() {
        EmbeddedChannel ch = requests();
        ch.writeInbound(buf("GET / HTTP/1.0\r\nConnection: keep-alive, X-Secret\r\nX-Secret: 1\r\nTE: trailers\r\n"
                + "Expect: 100-Continue\r\nX-Forwarded-For: 10.0.0.1\r\n\r\n"));
        HttpHead h = ch.readInbound();
        assertThat(h.isHttp10()).isTrue();
        assertThat(h.isKeepAlive()).isTrue();
        assertThat(h.connectionNamesOthers()).isTrue();
        assertThat(h.hasHopByHop()).isTrue();
        assertThat(h.expectsContinue()).isTrue();
        assertThat(h.kind(3)).isEqualTo(HttpHead.EXPECT);
        assertThat(h.kind(4)).isEqualTo(HttpHead.X_FORWARDED_FOR);
        h.release();

        ch.writeInbound(buf("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
        HttpHead c = ch.readInbound();
        assertThat(c.isKeepAlive()).isFalse();
        c.release();
        ch.finish();
    }

    @Test
    void anEmptyLineBeforeARequestIsIgnored() {
        EmbeddedChannel ch = requests();
        ch.writeInbound(buf("\r\n" + GET));
        HttpHead h = ch.readInbound();
        assertThat(h.target()).isEqualTo("/a?b=1");
        h.release();
        ch.finish();
    }

    @ParameterizedTest(name = "{2}")
    @CsvSource(delimiter = '|', value = {
            "GET / HTTP/1.1\\r\\nHost : x\\r\\n\\r\\n|400|whitespace between header name and colon",
            "GET / HTTP/1.1\\r\\nHost: x\\r\\n folded\\r\\n\\r\\n|400|obsolete line folding",
            "POST / HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 3\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n|400|both Content-Length and Transfer-Encoding",
            "POST / HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 3\\r\\nContent-Length: 4\\r\\n\\r\\n|400|invalid Content-Length",
            "POST / HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 3, 4\\r\\n\\r\\n|400|invalid Content-Length",
            "POST / HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: -1\\r\\n\\r\\n|400|invalid Content-Length",
            "POST / HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 1 2\\r\\n\\r\\n|400|invalid Content-Length",
            "POST / HTTP/1.1\\r\\nHost: x\\r\\nTransfer-Encoding: gzip\\r\\n\\r\\n|400|Transfer-Encoding must end with chunked",
            "POST / HTTP/1.1\\r\\nHost: x\\r\\nTransfer-Encoding: chunked, gzip\\r\\n\\r\\n|400|Transfer-Encoding must end with chunked",
            "POST / HTTP/1.0\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n|400|Transfer-Encoding in an HTTP/1.0 request",
            "GET / HTTP/2.0\\r\\nHost: x\\r\\n\\r\\n|505|unsupported HTTP version",
            "GET / HTTP/1.1 x\\r\\nHost: x\\r\\n\\r\\n|400|malformed request line",
            "GET  / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n|400|malformed request line",
            "G(T / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n|400|invalid character in method",
            "GET / HTTP/1.1\\r\\nHost: x\\r\\nHost: y\\r\\n\\r\\n|400|more than one Host header",
            "GET / HTTP/1.1\\r\\nHost: x\\r\\nNoColon\\r\\n\\r\\n|400|malformed header line",
            "GET / HTTP/1.1\\r\\nHost: x\\u0001y\\r\\n\\r\\n|400|control character in value of header Host",
    })
    void malformedRequestsGetASpecificError(String request, int status, String reason) {
        EmbeddedChannel ch = requests();
        ch.writeInbound(buf(request.replace("\\r", "\r").replace("\\n", "\n").replace("\\u0001", "\u0001")));
        List<Object> msgs = drain(ch);
        assertThat(msgs).hasSize(1);
        HttpDecodeError e = (HttpDecodeError) msgs.get(0);
        assertThat(e.status()).isEqualTo(status);
        assertThat(e.reason()).startsWith(reason);
        // everything after an error is discarded
        ch.writeInbound(buf(GET));
        assertThat(drain(ch)).isEmpty();
        ch.finish();
    }

    @Test
    void overlongLinesAndHeadersAreRefusedBeforeTheHeadEnds() {
        EmbeddedChannel ch = new EmbeddedChannel(Http1Decoder.requests(256, 1024));
        ch.writeInbound(buf("GET /" + "a".repeat(300)));
        HttpDecodeError line = ch.readInbound();
        assertThat(line.status()).isEqualTo(414);
        ch.finish();

        ch = new EmbeddedChannel(Http1Decoder.requests(256, 1024));
        ch.writeInbound(buf("GET / HTTP/1.1\r\nX-Big: " + "a".repeat(1100)));
        HttpDecodeError headers = ch.readInbound();
        assertThat(headers.status()).isEqualTo(431);
        assertThat(headers.reason()).isEqualTo("request headers exceed 1024 bytes");
        ch.finish();
    }

    @Test
    void aMalformedChunkSizeEndsTheBodyWithAnError() {
        EmbeddedChannel ch = requests();
        ch.writeInbound(buf("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"));
        List<Object> msgs = drain(ch);
        assertThat(msgs).hasSize(2);
        assertThat(msgs.get(1)).isInstanceOfSatisfying(HttpDecodeError.class,
                e -> assertThat(e.reason()).isEqualTo("malformed chunk size line"));
        releaseAll(msgs);
        ch.finish();
    }

    @Test
    void responsesToHeadAnd204And304HaveNoBody() {
        EmbeddedChannel ch = responses();
        Http1Decoder d = (Http1Decoder) ch.pipeline().first();
        d.expectBodylessResponse(true);
        ch.writeInbound(buf("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"));
        HttpHead head = ch.readInbound();
        assertThat(head.isComplete()).isTrue();
        assertThat(head.contentLength()).isEqualTo(100);
        head.release();
        d.expectBodylessResponse(false);
        ch.writeInbound(buf("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n"));
        List<Object> msgs = drain(ch);
        assertThat(msgs).hasSize(2).allSatisfy(m -> assertThat(((HttpHead) m).isComplete()).isTrue());
        releaseAll(msgs);
        ch.finish();
    }

    @Test
    void interimResponsesComeBeforeTheFinalOne() {
        EmbeddedChannel ch = responses();
        ch.writeInbound(buf("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"));
        List<Object> msgs = drain(ch);
        assertThat(msgs).hasSize(3);
        assertThat(((HttpHead) msgs.get(0)).status()).isEqualTo(100);
        assertThat(((HttpHead) msgs.get(1)).status()).isEqualTo(200);
        assertThat(((HttpBody) msgs.get(2)).isLast()).isTrue();
        releaseAll(msgs);
        ch.finish();
    }

    @Test
    void aCloseDelimitedResponseEndsWhenTheConnectionCloses() {
        EmbeddedChannel ch = responses();
        ch.writeInbound(buf("HTTP/1.0 200 OK\r\nServer: old\r\n\r\nsome bytes"));
        List<Object> msgs = drain(ch);
        HttpHead head = (HttpHead) msgs.get(0);
        assertThat(head.isCloseDelimited()).isTrue();
        assertThat(head.isKeepAlive()).isFalse();
        assertThat(((HttpBody) msgs.get(1)).isLast()).isFalse();
        releaseAll(msgs);
        ch.finish();
        HttpBody last = ch.readInbound();
        assertThat(last.isLast()).isTrue();
        last.release();
    }

    @Test
    void aResponseWithBothFramingsIsA502() {
        // RFC 9112 §6.3 lets a proxy treat it as an error (nginx does); see ResponseFramingTest
        EmbeddedChannel ch = responses();
        ch.writeInbound(buf("HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"));
        List<Object> msgs = drain(ch);
        assertThat(msgs).hasSize(1).first().isInstanceOfSatisfying(HttpDecodeError.class,
                e -> assertThat(e.status()).isEqualTo(502));
        ch.finish();
    }

    @Test
    void dechunkingPassesOnlyTheData() {
        EmbeddedChannel ch = responses();
        Http1Decoder d = (Http1Decoder) ch.pipeline().first();
        ch.writeInbound(buf("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"));
        HttpHead head = ch.readInbound();
        head.release();
        d.dechunk(true);
        ch.writeInbound(buf("5\r\nhello\r\n6\r\n world\r\n0\r\nT: 1\r\n\r\n"));
        List<Object> msgs = drain(ch);
        StringBuilder data = new StringBuilder();
        for (Object m : msgs) {
            data.append(((HttpBody) m).content().toString(StandardCharsets.ISO_8859_1));
        }
        assertThat(data.toString()).isEqualTo("hello world");
        assertThat(((HttpBody) msgs.get(msgs.size() - 1)).isLast()).isTrue();
        releaseAll(msgs);
        ch.finish();
    }

    @Test
    void malformedStatusLinesAreErrors() {
        EmbeddedChannel ch = responses();
        ch.writeInbound(buf("HTTP/1.1 2x0 OK\r\n\r\n"));
        HttpDecodeError e = ch.readInbound();
        assertThat(e.status()).isEqualTo(502);
        ch.finish();
    }

    @Test
    void mutatedAndRandomInputNeverThrowsOrLeaks() {
        java.util.Random rnd = new java.util.Random(42);
        String[] seeds = {GET, CHUNKED_POST, CL_POST, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n"};
        byte[] alphabet = "\r\n :;,0123456789abcdefABCDEF\t\u0000HTTP/1.GETPOSTchunkedContent-Length".getBytes(StandardCharsets.ISO_8859_1);
        for (int round = 0; round < 3000; round++) {
            byte[] b = seeds[rnd.nextInt(seeds.length)].getBytes(StandardCharsets.ISO_8859_1);
            if (round % 10 == 0) {
                b = new byte[1 + rnd.nextInt(200)];
                rnd.nextBytes(b);
            }
            for (int k = rnd.nextInt(4); k >= 0; k--) {
                b[rnd.nextInt(b.length)] = alphabet[rnd.nextInt(alphabet.length)];
            }
            EmbeddedChannel ch = round % 2 == 0 ? requests() : responses();
            int pos = 0;
            while (pos < b.length) {
                int n = 1 + rnd.nextInt(b.length - pos);
                ch.writeInbound(Bufs.copied(b, pos, n));
                pos += n;
            }
            List<Object> msgs = drain(ch);
            ch.finish();
            msgs.addAll(drain(ch));
            assertThat(msgs).allMatch(m -> m instanceof HttpHead || m instanceof HttpBody || m instanceof HttpDecodeError);
            assertThat(msgs.stream().filter(m -> m instanceof HttpDecodeError).count()).isLessThanOrEqualTo(1);
            releaseAll(msgs);
        }
    }
}
