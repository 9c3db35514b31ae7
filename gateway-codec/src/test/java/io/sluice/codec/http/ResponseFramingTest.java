package io.sluice.codec.http;

import io.sluice.codec.testing.Bufs;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Response framing a client must read exactly one way (response splitting, client desync): what
 * the response decoder refuses (a 502 for the client), and the one canonical form
 * {@link ProxyHeads#responseHead} re-emits framing headers in. Every message is also fed split at
 * every offset.
 */
class ResponseFramingTest {

    private static final ByteBufAllocator ALLOC = Bufs.ALLOC;

    private static EmbeddedChannel responses() {
        return new EmbeddedChannel(Http1Decoder.responses(4096, 1024));
    }

    private static ByteBuf buf(String s) {
        return Bufs.copied(s);
    }

    private static String unescape(String s) {
        return s.replace("\\r", "\r").replace("\\n", "\n").replace("\\t", "\t").replace("\\0", "\0")
                .replace("\\u0001", "\u0001");
    }

    private static List<Object> drain(EmbeddedChannel ch) {
        List<Object> out = new ArrayList<>();
        Object m;
        while ((m = ch.readInbound()) != null) {
            out.add(m);
        }
        return out;
    }

    /** What the decoder emits for {@code bytes} written in two pieces, split at {@code split} (0: whole). */
    private static List<Object> decode(String bytes, int split, boolean dechunk) {
        EmbeddedChannel ch = responses();
        ((Http1Decoder) ch.pipeline().first()).dechunk(dechunk);
        if (split > 0) {
            ch.writeInbound(buf(bytes.substring(0, split)));
        }
        ch.writeInbound(buf(bytes.substring(split)));
        List<Object> msgs = drain(ch);
        ch.finish(); // a close-delimited body ends here
        msgs.addAll(drain(ch));
        assertThat(ch.finishAndReleaseAll()).isFalse();
        return msgs;
    }

    /** The head decoded from {@code text} (which must be one). */
    private static HttpHead head(String text) {
        List<Object> msgs = decode(text, 0, false);
        assertThat(msgs).as("decoded %s", text).first().isInstanceOf(HttpHead.class);
        msgs.subList(1, msgs.size()).forEach(ReferenceCountUtil::release);
        return (HttpHead) msgs.get(0);
    }

    private static String text(ByteBuf b) {
        try {
            return b.toString(StandardCharsets.ISO_8859_1);
        } finally {
            b.release();
        }
    }

    // ------------------------------------------------------------------ refused heads: 502

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            // Content-Length: one line, one number
            "HTTP/1.1 200 OK\\r\\nContent-Length: 5\\r\\nContent-Length: 5\\r\\n\\r\\nhello|more than one Content-Length header",
            "HTTP/1.1 200 OK\\r\\nContent-Length: 5, 5\\r\\n\\r\\nhello|invalid Content-Length: 5, 5",
            "HTTP/1.1 200 OK\\r\\nContent-Length: 5\\r\\nContent-Length: 6\\r\\n\\r\\nhello|invalid Content-Length: 6",
            "HTTP/1.1 200 OK\\r\\nContent-Length: 5, 6\\r\\n\\r\\nhello|invalid Content-Length: 5, 6",
            "HTTP/1.1 200 OK\\r\\nContent-Length: +5\\r\\n\\r\\nhello|invalid Content-Length: +5",
            "HTTP/1.1 200 OK\\r\\nContent-Length: 5 5\\r\\n\\r\\nhello|invalid Content-Length: 5 5",
            "HTTP/1.1 200 OK\\r\\nContent-Length:\\r\\n\\r\\nhello|invalid Content-Length: ",
            "HTTP/1.1 304 Not Modified\\r\\nContent-Length: 5\\r\\nContent-Length: 5\\r\\n\\r\\n|more than one Content-Length header",
            // Transfer-Encoding with Content-Length (RFC 9112 §6.3: a proxy may treat it as an error; nginx does)
            "HTTP/1.1 200 OK\\r\\nContent-Length: 5\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n5\\r\\nhello\\r\\n0\\r\\n\\r\\n|both Content-Length and Transfer-Encoding",
            "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked\\r\\nContent-Length: 0\\r\\n\\r\\n5\\r\\nhello\\r\\n0\\r\\n\\r\\n|both Content-Length and Transfer-Encoding",
            "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: gzip\\r\\nContent-Length: 5\\r\\n\\r\\nhello|both Content-Length and Transfer-Encoding",
            // Transfer-Encoding: chunked alone, or codings without chunked; nothing in between
            "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n0\\r\\n\\r\\n|more than one Transfer-Encoding header",
            "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: gzip\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n0\\r\\n\\r\\n|more than one Transfer-Encoding header",
            "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked, chunked\\r\\n\\r\\n0\\r\\n\\r\\n|chunked must be the only transfer coding: chunked, chunked",
            "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked, gzip\\r\\n\\r\\n0\\r\\n\\r\\n|chunked must be the only transfer coding: chunked, gzip",
            "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: gzip, chunked\\r\\n\\r\\n0\\r\\n\\r\\n|chunked must be the only transfer coding: gzip, chunked",
            "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: ,chunked\\r\\n\\r\\n0\\r\\n\\r\\n|invalid Transfer-Encoding: ,chunked",
            "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked;q=1\\r\\n\\r\\n0\\r\\n\\r\\n|invalid Transfer-Encoding: chunked;q=1",
            "HTTP/1.1 200 OK\\r\\nTransfer-Encoding:\\r\\n\\r\\nhello|invalid Transfer-Encoding: ",
            "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: \"chunked\"\\r\\n\\r\\n0\\r\\n\\r\\n|invalid Transfer-Encoding: \"chunked\"",
            // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing
            "HTTP/1.0 200 OK\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n0\\r\\n\\r\\n|Transfer-Encoding in an HTTP/1.0 response",
            // head syntax (the shared header rules)
            "HTTP/1.1 200 OK\\r\\nX-A: 1\\r\\n folded\\r\\nContent-Length: 0\\r\\n\\r\\n|obsolete line folding in header section",
            "HTTP/1.1 200 OK\\r\\nContent-Length : 0\\r\\n\\r\\n|whitespace between header name and colon",
            "HTTP/1.1 200 OK\\r\\nX-A: a\\0b\\r\\nContent-Length: 0\\r\\n\\r\\n|control character in",
            "HTTP/1.1 200 OK\\r\\nX-A: a\\rContent-Length: 0\\r\\n\\r\\n|bare CR in header section~control character in value of header X-A",
            "HTTP/1.1 200 O\\u0001K\\r\\nContent-Length: 0\\r\\n\\r\\n|control character in status line",
    })
    void framingThatCouldBeReadTwoWaysIsA502(String response, String reason) {
        // reason: the start of the error's reason (alternatives separated by ~: a head still
        // arriving is refused by the byte lexer, a complete one by the parser)
        String all = unescape(response);
        for (int split = 0; split < all.length(); split++) {
            List<Object> msgs = decode(all, split, false);
            assertThat(msgs).as("split %d: %s", split, msgs).hasSize(1).first()
                    .isInstanceOfSatisfying(HttpDecodeError.class, e -> {
                        assertThat(e.status()).isEqualTo(502);
                        assertThat(reason.split("~")).as(e.reason()).anyMatch(e.reason()::startsWith);
                    });
        }
    }

    // ------------------------------------------------------------------ refused bodies: after the head

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "5;ext=a\\rb\\r\\nhello\\r\\n0\\r\\n\\r\\n|malformed chunk size line",
            "5;ext=a\\0b\\r\\nhello\\r\\n0\\r\\n\\r\\n|malformed chunk size line",
            "5\\nhello\\r\\n0\\r\\n\\r\\n|bare LF in chunked framing",
            "5\\r\\nhello\\n0\\r\\n\\r\\n|missing CRLF after chunk data",
            "5 \\r\\nhello\\r\\n0\\r\\n\\r\\n|malformed chunk size line",
            "x\\r\\nhello\\r\\n0\\r\\n\\r\\n|malformed chunk size line",
            "-5\\r\\nhello\\r\\n0\\r\\n\\r\\n|malformed chunk size line",
            "1000000000000000\\r\\nhello\\r\\n0\\r\\n\\r\\n|malformed chunk size line",
            "0\\r\\n\\r\\r\\nHTTP/1.1 200 OK\\r\\nSet-Cookie: a=b\\r\\n\\r\\n|malformed trailer field",
            "0\\r\\nX-T: 1\\n\\r\\n|bare LF in chunked framing",
            "0\\r\\nContent-Length: 5\\r\\n\\r\\n|Content-Length is not allowed in a trailer section",
            "0\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n|Transfer-Encoding is not allowed in a trailer section",
            "0\\r\\nX T: 1\\r\\n\\r\\n|malformed trailer field",
            "0\\r\\nX-T : 1\\r\\n\\r\\n|malformed trailer field",
            "0\\r\\nX-T: a\\u0001\\r\\n\\r\\n|control character in trailer field X-T",
    })
    void aMalformedChunkedResponseBodyIsAnErrorNeverForwarded(String body, String reason) {
        String head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        String all = head + unescape(body);
        for (int split = head.length(); split < all.length(); split++) {
            for (boolean dechunk : new boolean[] {false, true}) {
                List<Object> msgs = decode(all, split, dechunk);
                assertThat(msgs).as("split %d", split).last().isInstanceOfSatisfying(HttpDecodeError.class, e -> {
                    assertThat(e.status()).isEqualTo(502);
                    assertThat(e.reason()).isEqualTo(reason);
                });
                assertThat(msgs.stream().filter(m -> m instanceof HttpHead).count()).as("one head").isEqualTo(1);
                assertThat(msgs.stream().filter(m -> m instanceof HttpBody b && b.isLast()).count())
                        .as("never a complete body").isZero();
                msgs.forEach(ReferenceCountUtil::release);
            }
        }
    }

    // ------------------------------------------------------------------ accepted: one canonical form

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            // received | addChunked | dropFraming | what the client gets
            "HTTP/1.1 200 OK\\r\\nContent-Length:\\t005 \\r\\nA: 1\\r\\n\\r\\n|false|false|HTTP/1.1 200 OK\\r\\nContent-Length: 5\\r\\nA: 1\\r\\n\\r\\n",
            "HTTP/1.1 200 OK\\r\\nContent-length:5\\r\\n\\r\\n|false|false|HTTP/1.1 200 OK\\r\\nContent-Length: 5\\r\\n\\r\\n",
            "HTTP/1.1 304 Not Modified\\r\\nContent-Length:  012\\r\\n\\r\\n|false|false|HTTP/1.1 304 Not Modified\\r\\nContent-Length: 12\\r\\n\\r\\n",
            "HTTP/1.1 200 OK\\r\\nTransfer-Encoding:\\tChunked \\r\\nA: 1\\r\\n\\r\\n|false|false|HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked\\r\\nA: 1\\r\\n\\r\\n",
            "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: CHUNKED\\r\\n\\r\\n|false|true|HTTP/1.1 200 OK\\r\\n\\r\\n",
            // codings without chunked: close-delimited, chunked by the gateway for an HTTP/1.1 client, one line
            "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: gzip\\r\\nA: 1\\r\\n\\r\\n|true|false|HTTP/1.1 200 OK\\r\\nTransfer-Encoding: gzip, chunked\\r\\nA: 1\\r\\n\\r\\n",
            "HTTP/1.1 200 OK\\r\\nTransfer-Encoding:\\tgzip ,  deflate \\r\\n\\r\\n|true|false|HTTP/1.1 200 OK\\r\\nTransfer-Encoding: gzip, deflate, chunked\\r\\n\\r\\n",
            "HTTP/1.1 200 OK\\r\\nTransfer-Encoding: gzip\\r\\n\\r\\n|false|false|HTTP/1.1 200 OK\\r\\nTransfer-Encoding: gzip\\r\\n\\r\\n",
    })
    void acceptedFramingReachesTheClientInOneCanonicalForm(String received, boolean addChunked, boolean dropFraming,
                                                           String expected) {
        String in = unescape(received);
        for (int split = 0; split < in.length(); split++) {
            List<Object> msgs = decode(in, split, false);
            assertThat(msgs).as("split %d", split).first().isInstanceOf(HttpHead.class);
            HttpHead h = (HttpHead) msgs.get(0);
            assertThat(h.hasHopByHop()).as("never forwarded as received").isTrue();
            ByteBuf out = ProxyHeads.responseHead(ALLOC, h, addChunked, dropFraming, ProxyHeads.CONNECTION_AS_IS);
            assertThat(out).isNotSameAs(h.raw());
            assertThat(text(out)).isEqualTo(unescape(expected));
            msgs.forEach(ReferenceCountUtil::release);
        }
    }

    @Test
    void codingsWithoutChunkedAreACloseDelimitedBody() {
        HttpHead h = head("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n");
        assertThat(h.isCloseDelimited()).isTrue();
        assertThat(h.isChunked()).isFalse();
        assertThat(h.contentLength()).isEqualTo(-1);
        h.release();
    }

    @Test
    void theCommonResponseIsForwardedAsTheBytesReceived() {
        for (String s : new String[] {
                "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: s\r\n\r\n",
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nServer: s\r\n\r\n",
                "HTTP/1.1 304 Not Modified\r\nContent-Length: 0\r\n\r\n"}) {
            HttpHead h = head(s);
            assertThat(h.hasHopByHop()).as(s).isFalse();
            ByteBuf out = ProxyHeads.responseHead(ALLOC, h, false, false, ProxyHeads.CONNECTION_AS_IS);
            assertThat(out).isSameAs(h.raw());
            assertThat(text(out)).isEqualTo(s);
        }
    }

    @Test
    void responsesWithoutABodyStillDoNotReadOne() {
        // 1xx, 204, 304 and answers to HEAD end with their head, whatever framing they announce
        List<Object> msgs = decode("HTTP/1.1 100 Continue\r\nContent-Length: 6\r\n\r\n"
                + "HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "HTTP/1.1 304 Not Modified\r\nContent-Length: 6\r\n\r\n", 0, false);
        assertThat(msgs).hasSize(3).allSatisfy(m -> assertThat(((HttpHead) m).isComplete()).isTrue());
        msgs.forEach(ReferenceCountUtil::release);
    }
}
