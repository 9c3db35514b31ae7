package io.sluice.server.http2;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.codec.testing.Bufs;
import io.sluice.server.channel.SluicePipeline;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP/2 connection's write path for many streams (issue #21): the flushes of the streams
 * answered in one event-loop turn leave as one socket write, and a turn's worth of answers does
 * not make the connection unwritable.
 */
class Http2ServerTuningTest {

    /** Counts the flushes that reach the socket (the head side of {@code h2-flush}). */
    static final class FlushCounter extends ChannelOutboundHandlerAdapter {
        int flushes;

        @Override
        public void flush(ChannelHandlerContext ctx) {
            flushes++;
            ctx.flush();
        }
    }

    private static EmbeddedChannel connection(FlushCounter counter) {
        EmbeddedChannel ch = new EmbeddedChannel(counter);
        ch.pipeline().addLast(SluicePipeline.H2_CODEC, new ChannelInboundHandlerAdapter());
        Http2Server.tune(ch.pipeline());
        return ch;
    }

    @Test
    void flushesOfOneTurnOutsideAReadAreOneSocketWrite() {
        FlushCounter counter = new FlushCounter();
        EmbeddedChannel ch = connection(counter);
        ChannelHandlerContext codec = ch.pipeline().context(SluicePipeline.H2_CODEC);
        // 100 streams answered by 100 upstream reads in one turn, each flushing its answer (the
        // writes go first: an EmbeddedChannel runs its pending tasks on every write)
        for (int i = 0; i < 100; i++) {
            codec.write(Bufs.copied("answer " + i));
        }
        for (int i = 0; i < 100; i++) {
            codec.flush();
        }
        assertThat(counter.flushes).as("flushes before the loop ran its tasks").isZero();
        ch.runPendingTasks();
        assertThat(counter.flushes).isEqualTo(1);
        int n = 0;
        Object m;
        while ((m = ch.readOutbound()) != null) {
            io.netty.util.ReferenceCountUtil.release(m);
            n++;
        }
        assertThat(n).isEqualTo(100);
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void flushesDuringAReadWaitForReadComplete() {
        FlushCounter counter = new FlushCounter();
        EmbeddedChannel ch = connection(counter);
        ChannelHandlerContext codec = ch.pipeline().context(SluicePipeline.H2_CODEC);
        for (int i = 0; i < 10; i++) {
            codec.write(Bufs.copied("answer " + i));
        }
        ch.pipeline().fireChannelRead(Bufs.copied("frames"));
        for (int i = 0; i < 10; i++) {
            codec.flush();
        }
        assertThat(counter.flushes).isZero();
        ch.pipeline().fireChannelReadComplete();
        assertThat(counter.flushes).isEqualTo(1);
        ch.finishAndReleaseAll();
    }

    @Test
    void anH2cUpstreamConnectionSendsTheRequestsOfOneTurnInOneWrite() {
        FlushCounter counter = new FlushCounter();
        EmbeddedChannel ch = new EmbeddedChannel(counter);
        Http2Server.tuneUpstream(ch);
        ch.pipeline().addLast(SluicePipeline.H2_CODEC, new ChannelInboundHandlerAdapter());
        ChannelHandlerContext codec = ch.pipeline().context(SluicePipeline.H2_CODEC);
        for (int i = 0; i < 50; i++) { // 50 streams opened in one turn, each flushing its request head
            codec.write(Bufs.copied("request " + i));
        }
        for (int i = 0; i < 50; i++) {
            codec.flush();
        }
        assertThat(counter.flushes).isZero();
        ch.runPendingTasks();
        assertThat(counter.flushes).isEqualTo(1);
        assertThat(ch.config().getWriteBufferHighWaterMark()).isEqualTo(1024 * 1024);
        ch.finishAndReleaseAll();
    }

    @Test
    void aTurnOfAnswersDoesNotMakeTheConnectionUnwritable() {
        EmbeddedChannel ch = connection(new FlushCounter());
        assertThat(ch.config().getWriteBufferHighWaterMark()).isEqualTo(1024 * 1024);
        assertThat(ch.config().getWriteBufferLowWaterMark()).isEqualTo(512 * 1024);
        ch.finishAndReleaseAll();
    }
}
