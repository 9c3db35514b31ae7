package io.sluice.codec.http;

import io.sluice.codec.testing.Bufs;
import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The request forms and framing a proxy must read exactly one way (issue #22: absolute-form
 * targets, path normalization, framing forms stricter peers reject, Host syntax) and the refusal of
 * input that cannot become a message at its first impossible byte (#23).
 */
class Http1DecoderStrictTest {

    private static EmbeddedChannel requests() {
        return new EmbeddedChannel(Http1Decoder.requests(4096, 1024));
    }

    private static EmbeddedChannel responses() {
        return new EmbeddedChannel(Http1Decoder.responses(4096, 1024));
    }

    private static ByteBuf buf(String s) {
        return Bufs.copied(s);
    }

    private static String unescape(String s) {
        return s.replace("\\r", "\r").replace("\\n", "\n").replace("\\t", "\t").replace("\\0", "\0");
    }

    private static List<Object> drain(EmbeddedChannel ch) {
        List<Object> out = new ArrayList<>();
        Object m;
        while ((m = ch.readInbound()) != null) {
            out.add(m);
        }
        return out;
    }

    private static HttpHead head(String request) {
        EmbeddedChannel ch = requests();
        ch.writeInbound(buf(request));
        Object m = ch.readInbound();
        assertThat(m).as("decoded %s", request).isInstanceOf(HttpHead.class);
        assertThat(ch.finishAndReleaseAll()).isFalse();
        return (HttpHead) m;
    }

    /** The error the request gets, whole and also split at every offset. */
    private static HttpDecodeError errorFor(String request) {
        HttpDecodeError whole = null;
        for (int split = 0; split < request.length(); split++) {
            EmbeddedChannel ch = requests();
            if (split > 0) {
                ch.writeInbound(buf(request.substring(0, split)));
            }
            ch.writeInbound(buf(request.substring(split)));
            List<Object> msgs = drain(ch);
            HttpDecodeError e = (HttpDecodeError) msgs.stream().filter(m -> m instanceof HttpDecodeError)
                    .findFirst().orElse(null);
            assertThat(e).as("%s split at %d gives an error, got %s", request, split, msgs).isNotNull();
            msgs.forEach(ReferenceCountUtil::release);
            ch.finishAndReleaseAll();
            if (split == 0) {
                whole = e;
            } else {
                assertThat(e.status()).as("split at %d", split).isEqualTo(whole.status());
            }
        }
        return whole;
    }

    // ------------------------------------------------------------------ request targets

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "GET http://internal.example/private.txt HTTP/1.1|internal.example|/private.txt|/private.txt",
            "GET https://internal.example/a?b=1 HTTP/1.1|internal.example|/a|/a?b=1",
            "GET HTTP://Internal.Example:8080 HTTP/1.1|Internal.Example:8080|/|/",
            "GET http://10.0.0.1?x HTTP/1.1|10.0.0.1|/|/?x",
            "GET http://[::1]:81/p/./q/../r HTTP/1.1|[::1]:81|/p/r|/p/r",
    })
    void anAbsoluteFormTargetNamesTheAuthorityWhateverHostSays(String line, String authority, String path, String target) {
        HttpHead h = head(line + "\r\nHost: public.example\r\n\r\n");
        assertThat(h.targetForm()).isEqualTo(HttpHead.ABSOLUTE_FORM);
        assertThat(h.authority()).isEqualTo(authority);
        assertThat(h.path()).isEqualTo(path);
        assertThat(h.forwardTarget()).isEqualTo(target);
        assertThat(h.hasHopByHop()).as("must be rebuilt").isTrue();
        h.release();
    }

    @Test
    void anOrdinaryRequestIsNotRewrittenAndItsPathIsTheReceivedOne() {
        HttpHead h = head("GET /shop/items/42.html?ref=home HTTP/1.1\r\nHost: shop.example:8080\r\n\r\n");
        assertThat(h.targetForm()).isEqualTo(HttpHead.ORIGIN_FORM);
        assertThat(h.authority()).isEqualTo("shop.example:8080");
        assertThat(h.path()).isEqualTo("/shop/items/42.html");
        assertThat(h.forwardTarget()).isNull();
        assertThat(h.special).as("nothing extra for an ordinary target").isNull();
        assertThat(h.hasHopByHop()).isFalse();
        h.release();

        HttpHead o = head("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n");
        assertThat(o.targetForm()).isEqualTo(HttpHead.ASTERISK_FORM);
        assertThat(o.path()).isEqualTo("*");
        assertThat(o.forwardTarget()).isNull();
        o.release();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "/pub/../private.txt|/private.txt",
            "/pub/%2e%2e/private.txt|/private.txt",
            "/pub/%2E%2e/%2e/x|/x",
            "/pub/.%2E/private.txt|/private.txt",
            "/../../etc/passwd|/etc/passwd",
            "/a/./b/.|/a/b/",
            "/a/b/..|/a/",
            "/%7Euser/%41%62c|/~user/Abc",
            "/a%3f/b%2a|/a%3F/b%2A",
            "/a//b/../c|/a//c",
    })
    void pathsAreNormalizedBeforeRoutingAndForwarding(String path, String normalized) {
        HttpHead h = head("GET " + path + "?q=%2e%2e HTTP/1.1\r\nHost: h\r\n\r\n");
        assertThat(h.path()).isEqualTo(normalized);
        assertThat(h.forwardTarget()).isEqualTo(normalized + "?q=%2e%2e");
        assertThat(h.hasHopByHop()).isTrue();
        h.release();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "GET http://user:pw@internal.example/ HTTP/1.1|400|userinfo in request target",
            "GET http://inter nal/ HTTP/1.1|400|malformed request line",
            "GET http://a_b<c/ HTTP/1.1|400|invalid authority in request target",
            "GET http://a.example:99999/ HTTP/1.1|400|invalid authority in request target",
            "GET http:///x HTTP/1.1|400|absolute-form request target without a host",
            "GET ftp://a.example/ HTTP/1.1|400|unsupported scheme in request target",
            "GET internal.example:443 HTTP/1.1|400|request target must be an absolute path or an http(s) URL",
            "CONNECT internal.example:443 HTTP/1.1|405|CONNECT is not supported",
            "GET * HTTP/1.1|400|asterisk-form request target is only allowed with OPTIONS",
            "GET /a#frag HTTP/1.1|400|fragment in request target",
            "GET /pub/..%2fprivate.txt HTTP/1.1|400|encoded slash or backslash",
            "GET /pub/..%5Cprivate.txt HTTP/1.1|400|encoded slash or backslash",
            "GET /pub\\..\\private.txt HTTP/1.1|400|backslash in path",
            "GET /a%zz HTTP/1.1|400|malformed percent-encoding in path",
            "GET /a% HTTP/1.1|400|malformed percent-encoding in path",
    })
    void badTargetsAreRefused(String line, int status, String reason) {
        HttpDecodeError e = errorFor(line + "\r\nHost: public.example\r\n\r\n");
        assertThat(e.status()).isEqualTo(status);
        assertThat(e.reason()).startsWith(reason);
    }

    @Test
    void escapedSlashesCanBeKeptOrDecodedInstead() {
        String req = "GET /pub/..%2fprivate.txt HTTP/1.1\r\nHost: h\r\n\r\n";
        EmbeddedChannel keep = new EmbeddedChannel(Http1Decoder.forRequests(
                Http1DecoderConfig.of(4096, 1024).withPath(PathNormalizer.EscapedSlashes.KEEP, false)));
        keep.writeInbound(buf(req));
        HttpHead k = keep.readInbound();
        assertThat(k.path()).isEqualTo("/pub/..%2Fprivate.txt");
        k.release();
        keep.finishAndReleaseAll();

        EmbeddedChannel decode = new EmbeddedChannel(Http1Decoder.forRequests(
                Http1DecoderConfig.of(4096, 1024).withPath(PathNormalizer.EscapedSlashes.DECODE, true)));
        decode.writeInbound(buf(req));
        decode.writeInbound(buf("GET //pub///x%2F%2Fy HTTP/1.1\r\nHost: h\r\n\r\n"));
        HttpHead d = decode.readInbound();
        assertThat(d.path()).isEqualTo("/private.txt");
        d.release();
        HttpHead m = decode.readInbound();
        assertThat(m.path()).isEqualTo("/pub/x/y");
        m.release();
        decode.finishAndReleaseAll();
    }

    // ------------------------------------------------------------------ framing and Host

    @ParameterizedTest(name = "{2}")
    @CsvSource(delimiter = '|', value = {
            "POST / HTTP/1.1\\r\\nHost: x\\r\\nTransfer-Encoding: ,chunked\\r\\n\\r\\n|400|empty element in Transfer-Encoding",
            "POST / HTTP/1.1\\r\\nHost: x\\r\\nTransfer-Encoding: chunked,\\r\\n\\r\\n|400|empty element in Transfer-Encoding",
            "POST / HTTP/1.1\\r\\nHost: x\\r\\nTransfer-Encoding: gzip, chunked\\r\\n\\r\\n|501|Transfer-Encoding gzip, chunked is not implemented",
            "POST / HTTP/1.1\\r\\nHost: x\\r\\nTransfer-Encoding: chunked\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n|400|more than one Transfer-Encoding header",
            "POST / HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 35\\r\\nContent-Length: 35\\r\\n\\r\\n|400|more than one Content-Length header",
            "POST / HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 35, 35\\r\\n\\r\\n|400|invalid Content-Length",
            "GET / HTTP/1.1\\r\\nHost: a b\\r\\n\\r\\n|400|invalid Host header",
            "GET / HTTP/1.1\\r\\nHost: user@a\\r\\n\\r\\n|400|invalid Host header",
            "GET / HTTP/1.1\\r\\nHost: a:80:80\\r\\n\\r\\n|400|invalid Host header",
            "GET / HTTP/1.1\\r\\nHost: a/b\\r\\n\\r\\n|400|invalid Host header",
            "GET / HTTP/1.1\\r\\nHost: [::1\\r\\n\\r\\n|400|invalid Host header",
            "GET / HTTP/1.1\\r\\nHost: \\tx\\u0001\\r\\n\\r\\n|400|control character in",
            "GET / HTTP/0.1\\r\\nHost: x\\r\\n\\r\\n|505|unsupported HTTP version HTTP/0.1",
            "GET / HTTP/2.0\\r\\nHost: x\\r\\n\\r\\n|505|unsupported HTTP version HTTP/2.0",
    })
    void framingAndHostFormsThatCouldBeReadTwoWaysAreRefused(String request, int status, String reason) {
        HttpDecodeError e = errorFor(unescape(request).replace("\\u0001", "\u0001"));
        assertThat(e.status()).isEqualTo(status);
        assertThat(e.reason()).startsWith(reason);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"a.example", "a.example:8080", "10.0.0.1:80", "[::1]", "[2001:db8::1]:443", "", "xn--bcher-kva.example",
            "a-b_c~d!$&'()*+,;=%41"})
    void validHostsAreAccepted(String host) {
        head("GET / HTTP/1.1\r\nHost: " + host + "\r\n\r\n").release();
    }

    @ParameterizedTest(name = "{1}")
    @CsvSource(delimiter = '|', value = {
            "5;ext=a\\rb\\r\\nhello\\r\\n0\\r\\n\\r\\n|malformed chunk size line",
            "5\\nhello\\r\\n0\\r\\n\\r\\n|bare LF in chunked framing",
            "5\\r\\nhello\\n0\\r\\n\\r\\n|missing CRLF after chunk data",
            "5 \\r\\nhello\\r\\n0\\r\\n\\r\\n|malformed chunk size line",
            "0\\r\\n\\r\\r\\nGET /smuggled HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n|malformed trailer field",
            "0\\r\\nX-T: 1\\n\\r\\n|bare LF in chunked framing",
            "0\\r\\nContent-Length: 5\\r\\n\\r\\n|Content-Length is not allowed in a trailer section",
            "0\\r\\nX T: 1\\r\\n\\r\\n|malformed trailer field",
            "0\\r\\nX-T: a\\u0001\\r\\n\\r\\n|control character in trailer field X-T",
    })
    void chunkedFramingIsReadOneWayOnly(String body, String reason) {
        String head = "POST /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
        String all = head + unescape(body).replace("\\u0001", "\u0001");
        for (int split = head.length(); split < all.length(); split++) {
            for (boolean dechunk : new boolean[] {false, true}) {
                EmbeddedChannel ch = requests();
                ((Http1Decoder) ch.pipeline().first()).dechunk(dechunk);
                ch.writeInbound(buf(all.substring(0, split)));
                ch.writeInbound(buf(all.substring(split)));
                List<Object> msgs = drain(ch);
                assertThat(msgs).as("split %d", split).last().isInstanceOfSatisfying(HttpDecodeError.class, e -> {
                    assertThat(e.status()).isEqualTo(400);
                    assertThat(e.reason()).isEqualTo(reason);
                });
                assertThat(msgs.stream().filter(m -> m instanceof HttpHead).count()).as("nothing smuggled").isEqualTo(1);
                msgs.forEach(ReferenceCountUtil::release);
                ch.finishAndReleaseAll();
            }
        }
    }

    @Test
    void validTrailersPassAndAnOversizedTrailerSectionIs431() {
        String head = "POST /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
        String ok = head + "3;name=\"v a\"\r\nabc\r\n0\r\nX-Checksum: abc\r\nX-Other:\r\n\r\n";
        EmbeddedChannel ch = requests();
        ch.writeInbound(buf(ok));
        List<Object> msgs = drain(ch);
        assertThat(msgs).noneMatch(m -> m instanceof HttpDecodeError);
        assertThat(msgs.get(msgs.size() - 1)).isInstanceOfSatisfying(HttpBody.class, b -> assertThat(b.isLast()).isTrue());
        msgs.forEach(ReferenceCountUtil::release);
        ch.finishAndReleaseAll();

        ch = requests();
        ch.writeInbound(buf(head + "0\r\nX-Big: " + "b".repeat(1100) + "\r\n\r\n"));
        msgs = drain(ch);
        assertThat(msgs.get(msgs.size() - 1)).isInstanceOfSatisfying(HttpDecodeError.class,
                e -> assertThat(e.status()).isEqualTo(431));
        msgs.forEach(ReferenceCountUtil::release);
        ch.finishAndReleaseAll();
    }

    // ------------------------------------------------------------------ the first impossible byte

    @ParameterizedTest(name = "{1}")
    @CsvSource(delimiter = '|', value = {
            "\\u0016\\u0003\\u0001\\u0002\\u0000|invalid character in method",
            "GE\\u0000|invalid character in method",
            "' GET'|malformed request line",
            "GET  /|malformed request line",
            "GET \\u007f|invalid character in request target",
            "GET <|invalid character in request target",
            "GET /a\\tb|invalid character in request target",
            "GET / XTTP|malformed request line",
            "'GET / HTTP/1.1 '|malformed request line",
            "GET / HTTP/1.1\\rX|bare CR in request line",
            "GET / HTTP/1.1\\r\\nHost : x|whitespace between header name and colon",
            "GET / HTTP/1.1\\r\\n x|obsolete line folding in header section",
            "GET / HTTP/1.1\\r\\nHo(st|malformed header line",
            "GET / HTTP/1.1\\r\\nHost: a\\u0000|control character in header value",
            "GET / HTTP/1.1\\r\\nHost: a\\rb|bare CR in header section",
            "\\r\\r|bare CR before the request line",
    })
    void bytesThatCannotBecomeARequestAreRefusedAtOnce(String prefix, String reason) {
        String bytes = unescape(prefix).replace("\\u0016", "\u0016").replace("\\u0003", "\u0003")
                .replace("\\u0001", "\u0001").replace("\\u0002", "\u0002").replace("\\u0000", "\0")
                .replace("\\u007f", "\u007f");
        EmbeddedChannel ch = requests();
        ch.writeInbound(buf(bytes)); // no line end: the old decoder waited for one
        HttpDecodeError e = ch.readInbound();
        assertThat(e).isNotNull();
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.reason()).isEqualTo(reason);
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void aSpacelessOverlongMethodIsRefusedAfterItsLimit() {
        EmbeddedChannel ch = requests();
        ch.writeInbound(buf("A".repeat(RequestHeadParser.MAX_METHOD_LENGTH)));
        assertThat((Object) ch.readInbound()).isNull();
        ch.writeInbound(buf("A"));
        HttpDecodeError e = ch.readInbound();
        assertThat(e.reason()).isEqualTo("method longer than 32 characters");
        ch.finishAndReleaseAll();
    }

    @Test
    void randomBytesAreRefusedWithoutWaitingForALineEnd() {
        Random rnd = new Random(7);
        int refusedAtOnce = 0;
        for (int i = 0; i < 500; i++) {
            byte[] b = new byte[4096];
            rnd.nextBytes(b);
            EmbeddedChannel ch = requests();
            for (int off = 0; off < b.length; off += 512) { // as a client writes them: in pieces
                ch.writeInbound(Bufs.copied(b, off, 512));
            }
            List<Object> msgs = drain(ch);
            if (msgs.size() == 1 && msgs.get(0) instanceof HttpDecodeError e && e.status() == 400) {
                refusedAtOnce++;
            }
            msgs.forEach(ReferenceCountUtil::release);
            ch.finishAndReleaseAll();
        }
        assertThat(refusedAtOnce).isEqualTo(500);
    }

    @Test
    void aFewEmptyLinesBeforeARequestAreAllowed() {
        EmbeddedChannel ch = requests();
        ch.writeInbound(buf("\r\n".repeat(Http1Decoder.MAX_LEADING_EMPTY_LINES) + "GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
        HttpHead h = ch.readInbound();
        assertThat(h.path()).isEqualTo("/");
        h.release();
        ch.finishAndReleaseAll();

        ch = requests();
        for (int i = 0; i <= Http1Decoder.MAX_LEADING_EMPTY_LINES; i++) {
            ch.writeInbound(buf("\r"));
            ch.writeInbound(buf("\n"));
        }
        HttpDecodeError e = ch.readInbound();
        assertThat(e.reason()).startsWith("more than 8 empty lines");
        ch.finishAndReleaseAll();
    }

    @Test
    void validMessagesArrivingAByteAtATimePassTheEarlyChecks() {
        String[] requests = {
                "GET http://a.example/x?y HTTP/1.1\r\nHost: b\r\nX-Odd:\t v \t\r\n\r\n",
                "\r\nOPTIONS * HTTP/1.0\nA: b\n\n",
                "PROPPATCH /%7Ea HTTP/1.1\r\nHost: [::1]:8080\r\nContent-Length: 2\r\n\r\nok",
        };
        for (String r : requests) {
            EmbeddedChannel ch = requests();
            for (char c : r.toCharArray()) {
                ch.writeInbound(buf(String.valueOf(c)));
            }
            List<Object> msgs = drain(ch);
            assertThat(msgs).as(r).isNotEmpty().noneMatch(m -> m instanceof HttpDecodeError);
            assertThat(msgs.get(0)).isInstanceOf(HttpHead.class);
            msgs.forEach(ReferenceCountUtil::release);
            ch.finishAndReleaseAll();
        }
        String response = "HTTP/1.1 200 OK\r\nServer: s\r\nContent-Length: 0\r\n\r\n";
        EmbeddedChannel ch = responses();
        for (char c : response.toCharArray()) {
            ch.writeInbound(buf(String.valueOf(c)));
        }
        HttpHead h = ch.readInbound();
        assertThat(h.status()).isEqualTo(200);
        h.release();
        ch.finishAndReleaseAll();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "SSH-2.0-OpenSSH_9.2p1 Debian-2\\r\\n|malformed status line",
            "HTTP/1.1 2x|malformed status code",
            "HTTP/1.1 600|malformed status code",
            "HTTP/1.1 200OK|malformed status line",
            "HTTP/1.1 200 OK\\u0000|control character in status line",
            "\\u0015\\u0003\\u0003|malformed status line",
    })
    void aResponseThatCannotBeHttpIsRefusedAtItsFirstBytes(String prefix, String reason) {
        EmbeddedChannel ch = responses();
        ch.writeInbound(buf(unescape(prefix).replace("\\u0000", "\0").replace("\\u0015", "\u0015")
                .replace("\\u0003", "\u0003")));
        HttpDecodeError e = ch.readInbound();
        assertThat(e).isNotNull();
        assertThat(e.status()).isEqualTo(502);
        assertThat(e.reason()).isEqualTo(reason);
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }
}
