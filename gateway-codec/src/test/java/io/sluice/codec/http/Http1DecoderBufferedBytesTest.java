package io.sluice.codec.http;

import io.sluice.codec.testing.Bufs;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Http1Decoder#bufferedBytes()} as a proxy reads it: in the handler after the decoder, at
 * the moment a response completes, it counts exactly the bytes received beyond that response.
 */
class Http1DecoderBufferedBytesTest {

    /** Records bufferedBytes() whenever a response ends (a complete head or the last body piece). */
    private static final class AtResponseEnd extends ChannelInboundHandlerAdapter {
        final Http1Decoder decoder;
        final List<Integer> seen = new ArrayList<>();

        AtResponseEnd(Http1Decoder decoder) {
            this.decoder = decoder;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof HttpHead h && h.isComplete() || msg instanceof HttpBody b && b.isLast()) {
                seen.add(decoder.bufferedBytes());
            }
            ReferenceCountUtil.release(msg);
        }
    }

    private static List<Integer> feed(boolean head, String... reads) {
        Http1Decoder decoder = Http1Decoder.responses(4096, 8192);
        decoder.expectBodylessResponse(head);
        AtResponseEnd probe = new AtResponseEnd(decoder);
        EmbeddedChannel ch = new EmbeddedChannel(decoder, probe);
        for (String r : reads) {
            ch.writeInbound(Bufs.copied(r));
        }
        assertThat(ch.finishAndReleaseAll()).isFalse();
        return probe.seen;
    }

    @Test
    void nothingIsBufferedAfterAResponseThatEndsTheRead() {
        assertThat(feed(false, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")).containsExactly(0);
        assertThat(feed(false, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", "lo")).containsExactly(0);
        assertThat(feed(false, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"))
                .containsExactly(0);
        assertThat(feed(false, "HTTP/1.1 204 No Content\r\n\r\n")).containsExactly(0);
    }

    @Test
    void bytesBeyondTheResponseInTheSameReadAreCounted() {
        assertThat(feed(false, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloXYZ")).containsExactly(3);
        assertThat(feed(false, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nHTTP/1"))
                .containsExactly(6);
        // a HEAD response's announced body, sent anyway
        assertThat(feed(true, "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody")).containsExactly(4);
        assertThat(feed(false, "HTTP/1.1 304 Not Modified\r\nContent-Length: 2\r\n\r\nhi")).containsExactly(2);
    }
}
