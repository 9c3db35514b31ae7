package io.sluice.server;

import io.sluice.codec.testing.Bufs;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.core.time.ManualScheduler;
import io.sluice.server.channel.DrainEvent;
import io.sluice.server.metrics.ListenerMetrics;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link ProtocolDetector} on a fake clock: the silence timeout, the hand-over, drain. */
class ProtocolDetectorTest {

    static final long SILENCE = TimeUnit.SECONDS.toNanos(5);

    final ManualScheduler clock = new ManualScheduler(1_000_000_000L);
    final ListenerMetrics metrics = new ListenerMetrics(new SimpleMeterRegistry(), "auto", "auto");
    final List<String> handedTo = new ArrayList<>();
    final List<String> received = new ArrayList<>();
    boolean draining;

    EmbeddedChannel connect() throws Exception {
        EmbeddedChannel ch = EmbeddedChannel.builder().register(false).build();
        ch.pipeline().addLast(new ProtocolDetector(c -> handTo(c, "http"), c -> handTo(c, "bolt"), () -> SILENCE,
                () -> draining, metrics, e -> clock));
        ch.register();
        return ch;
    }

    private void handTo(Channel c, String protocol) {
        handedTo.add(protocol);
        c.pipeline().addLast(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                ByteBuf b = (ByteBuf) msg;
                received.add(b.toString(StandardCharsets.US_ASCII));
                b.release();
            }
        });
    }

    @Test
    void aSilentConnectionClosesExactlyAtTheTimeout() throws Exception {
        EmbeddedChannel ch = connect();
        clock.advanceNanos(SILENCE - 1);
        assertThat(ch.isOpen()).isTrue();
        clock.advanceNanos(1);
        ch.runPendingTasks();
        assertThat(ch.isOpen()).isFalse();
        assertThat(handedTo).isEmpty();
        assertThat(metrics.activeConnections()).isZero(); // counted as opened and closed
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void theFirstByteHandsOverAndStopsTheTimer() throws Exception {
        EmbeddedChannel ch = connect();
        clock.advanceNanos(SILENCE / 2);
        ch.writeInbound(Bufs.copied("GET / HTTP/1.1\r\n"));
        assertThat(handedTo).containsExactly("http");
        assertThat(received).containsExactly("GET / HTTP/1.1\r\n");
        assertThat(clock.pendingTasks()).isZero();
        clock.advanceNanos(SILENCE);
        assertThat(ch.isOpen()).isTrue();
        assertThat(ch.pipeline().get(ProtocolDetector.class)).isNull();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void boltProtocolCodeGoesToBolt() throws Exception {
        EmbeddedChannel ch = connect();
        ch.writeInbound(Bufs.copied(new byte[]{1, 1}));
        assertThat(handedTo).containsExactly("bolt");
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void drainClosesAConnectionThatSentNothing() throws Exception {
        EmbeddedChannel ch = connect();
        ch.pipeline().fireUserEventTriggered(DrainEvent.INSTANCE);
        ch.runPendingTasks();
        assertThat(ch.isOpen()).isFalse();
        assertThat(clock.pendingTasks()).isZero();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }
}
