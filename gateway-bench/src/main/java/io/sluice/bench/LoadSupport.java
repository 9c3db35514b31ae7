package io.sluice.bench;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

import java.time.Duration;
import java.util.function.IntConsumer;

/** What the load tools share: option parsing and a byte counter in front of the decoder. */
public final class LoadSupport {

    private LoadSupport() {
    }

    /** The value after option {@code option} at {@code args[i]}. */
    public static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[i];
    }

    /** wrk/sofaload durations: {@code 500ms}, {@code 2s}, {@code 1.5s}, {@code 2m}, {@code 1h}, or plain seconds. */
    public static Duration duration(String s) {
        String v = s.trim().toLowerCase();
        try {
            if (v.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
            }
            if (v.endsWith("s")) {
                return Duration.ofMillis((long) (Double.parseDouble(v.substring(0, v.length() - 1)) * 1000));
            }
            if (v.endsWith("m")) {
                return Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1)));
            }
            if (v.endsWith("h")) {
                return Duration.ofHours(Long.parseLong(v.substring(0, v.length() - 1)));
            }
            return Duration.ofSeconds(Long.parseLong(v));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a duration: " + s);
        }
    }

    /** Counts the bytes a connection reads before decoding (wrk's and sofaload's "read" figure). */
    public static final class ByteCounter extends ChannelInboundHandlerAdapter {
        private final IntConsumer sink;

        public ByteCounter(IntConsumer sink) {
            this.sink = sink;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof ByteBuf b) {
                sink.accept(b.readableBytes());
            }
            ctx.fireChannelRead(msg);
        }
    }
}
