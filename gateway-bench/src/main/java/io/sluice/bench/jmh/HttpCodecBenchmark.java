package io.sluice.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import io.sluice.codec.http.Http1Decoder;
import io.sluice.codec.http.HttpBody;
import io.sluice.codec.http.HttpHead;
import io.sluice.codec.http.ProxyHeads;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * The codec work of one proxied HTTP/1.1 exchange, without sockets: decode the client's request,
 * write the head for the upstream (hop-by-hop headers out, X-Forwarded-* in), decode the
 * upstream's response (an nginx-style head plus a 1 KiB body) and write the head for the client.
 * {@code codec=netty} does it with Netty's HttpRequestDecoder/Encoder and HttpResponseDecoder/Encoder
 * (what Sluice used before), {@code codec=sluice} with {@link Http1Decoder} and {@link ProxyHeads}.
 * Both run on EmbeddedChannels. Run with {@code -prof gc} for bytes allocated per exchange.
 *
 * <p>{@code java -jar gateway-bench/target/benchmarks.jar jmh HttpCodecBenchmark -prof gc}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class HttpCodecBenchmark {

    /** A wrk-like request, and a browser-like one with more headers. */
    @Param({"wrk", "browser"})
    public String request;

    @Param({"netty", "sluice"})
    public String codec;

    /**
     * {@code xff}: the upstream head gains X-Forwarded-* (it is rebuilt); {@code none}: nothing
     * changes (Sluice forwards the received bytes, as with {@code x_forwarded: false}).
     */
    @Param({"xff", "none"})
    public String forwarded;

    private static final String WRK = "GET /1k HTTP/1.1\r\nHost: 127.0.0.1:29080\r\n\r\n";
    private static final String BROWSER = "GET /shop/items/42?ref=home HTTP/1.1\r\nHost: shop.example.com\r\n"
            + "User-Agent: Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/128.0\r\n"
            + "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n"
            + "Accept-Language: en-US,en;q=0.5\r\nAccept-Encoding: gzip, deflate, br\r\n"
            + "Cookie: session=0123456789abcdef0123456789abcdef; theme=dark\r\nConnection: keep-alive\r\n"
            + "Upgrade-Insecure-Requests: 1\r\nCache-Control: max-age=0\r\n\r\n";
    private static final String RESPONSE_HEAD = "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\n"
            + "Date: Mon, 23 Nov 2026 10:00:00 GMT\r\nContent-Type: application/octet-stream\r\n"
            + "Content-Length: 1024\r\nConnection: keep-alive\r\n\r\n";

    private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    private ByteBuf requestBytes;
    private ByteBuf responseBytes;
    private EmbeddedChannel reqDecoder;
    private EmbeddedChannel reqEncoder;
    private EmbeddedChannel respDecoder;
    private EmbeddedChannel respEncoder;

    @Setup(Level.Trial)
    public void setUp() {
        byte[] req = (request.equals("wrk") ? WRK : BROWSER).getBytes(StandardCharsets.ISO_8859_1);
        requestBytes = alloc.directBuffer(req.length).writeBytes(req);
        byte[] head = RESPONSE_HEAD.getBytes(StandardCharsets.ISO_8859_1);
        responseBytes = alloc.directBuffer(head.length + 1024).writeBytes(head).writeZero(1024);
        if (codec.equals("netty")) {
            reqDecoder = new EmbeddedChannel(new HttpRequestDecoder());
            reqEncoder = new EmbeddedChannel(new HttpRequestEncoder());
            respDecoder = new EmbeddedChannel(new HttpResponseDecoder());
            respEncoder = new EmbeddedChannel(new HttpResponseEncoder());
        } else {
            reqDecoder = new EmbeddedChannel(Http1Decoder.requests(8192, 65536));
            respDecoder = new EmbeddedChannel(Http1Decoder.responses(8192, 65536));
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        for (EmbeddedChannel ch : new EmbeddedChannel[] {reqDecoder, reqEncoder, respDecoder, respEncoder}) {
            if (ch != null) {
                ch.finishAndReleaseAll();
            }
        }
        requestBytes.release();
        responseBytes.release();
    }

    @Benchmark
    public int exchange() {
        return codec.equals("netty") ? netty() : sluice();
    }

    private int sluice() {
        reqDecoder.writeInbound(requestBytes.retainedDuplicate());
        HttpHead req = reqDecoder.readInbound();
        ByteBuf up = ProxyHeads.requestHead(alloc, req, null, null, forwarded.equals("xff") ? "127.0.0.1" : null, false);
        int n = up.readableBytes();
        up.release();
        req.release();

        respDecoder.writeInbound(responseBytes.retainedDuplicate());
        HttpHead resp = respDecoder.readInbound();
        ByteBuf down = ProxyHeads.responseHead(alloc, resp, false, false, ProxyHeads.CONNECTION_AS_IS);
        if (down != resp.raw()) {
            resp.release();
        }
        n += down.readableBytes();
        down.release();
        Object m;
        while ((m = respDecoder.readInbound()) != null) {
            n += ((HttpBody) m).content().readableBytes();
            ((HttpBody) m).release();
        }
        return n;
    }

    private int netty() {
        reqDecoder.writeInbound(requestBytes.retainedDuplicate());
        HttpRequest req = reqDecoder.readInbound();
        HttpHeaders h = req.headers();
        h.remove(HttpHeaderNames.CONNECTION);
        h.remove(HttpHeaderNames.KEEP_ALIVE);
        h.remove(HttpHeaderNames.UPGRADE);
        if (forwarded.equals("xff")) {
            h.set("x-forwarded-for", "127.0.0.1");
            h.set("x-forwarded-proto", "http");
            h.set("x-forwarded-host", h.get(HttpHeaderNames.HOST));
        }
        req.setProtocolVersion(HttpVersion.HTTP_1_1);
        reqEncoder.writeOutbound(req);
        Object m;
        while ((m = reqDecoder.readInbound()) != null) {
            reqEncoder.writeOutbound(m);
        }
        int n = drainOutbound(reqEncoder);

        respDecoder.writeInbound(responseBytes.retainedDuplicate());
        while ((m = respDecoder.readInbound()) != null) {
            if (m instanceof HttpResponse r) {
                r.headers().remove(HttpHeaderNames.CONNECTION);
            }
            if (m instanceof HttpContent || m instanceof HttpObject) {
                respEncoder.writeOutbound(m);
            } else {
                ReferenceCountUtil.release(m);
            }
        }
        return n + drainOutbound(respEncoder);
    }

    private static int drainOutbound(EmbeddedChannel ch) {
        int n = 0;
        Object o;
        while ((o = ch.readOutbound()) != null) {
            n += ((ByteBuf) o).readableBytes();
            ReferenceCountUtil.release(o);
        }
        return n;
    }
}
