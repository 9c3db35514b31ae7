package io.sluice.server.channel;

import io.sluice.codec.testing.Bufs;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.core.time.ManualScheduler;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The lingering close's bounds on a fake clock: at most {@code MAX_NANOS}, at most {@code MAX_BYTES}. */
class LingeringCloseHandlerTest {

    final ManualScheduler clock = new ManualScheduler(1_000_000_000L);
    final List<Object> reachedProtocol = new ArrayList<>();

    EmbeddedChannel lingering() {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.pipeline().addLast(SluicePipeline.METER, new ChannelInboundHandlerAdapter());
        ch.pipeline().addLast(SluicePipeline.HTTP_PROXY, new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                reachedProtocol.add(msg);
            }
        });
        LingeringCloseHandler.linger(ch, clock);
        return ch;
    }

    @Test
    void readsAndDiscardsUntilExactlyTheTimeBound() {
        EmbeddedChannel ch = lingering();
        assertThat(ch.pipeline().names()).startsWith(SluicePipeline.METER, SluicePipeline.LINGER);
        ch.writeInbound(Bufs.copied(new byte[4096]));
        assertThat(reachedProtocol).isEmpty();
        clock.advanceNanos(LingeringCloseHandler.MAX_NANOS - 1);
        ch.runPendingTasks();
        assertThat(ch.isOpen()).isTrue();
        clock.advanceNanos(1);
        ch.runPendingTasks();
        assertThat(ch.isOpen()).isFalse();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void closesOnceMoreThanTheByteBoundArrived() {
        EmbeddedChannel ch = lingering();
        ch.writeInbound(Bufs.copied(new byte[(int) LingeringCloseHandler.MAX_BYTES]));
        assertThat(ch.isOpen()).isTrue();
        ch.writeInbound(Bufs.copied(new byte[1]));
        ch.runPendingTasks();
        assertThat(ch.isOpen()).isFalse();
        assertThat(clock.pendingTasks()).as("the time bound is cancelled").isZero();
        assertThat(reachedProtocol).isEmpty();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }
}
