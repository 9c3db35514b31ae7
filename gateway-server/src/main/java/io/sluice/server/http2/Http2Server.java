package io.sluice.server.http2;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.codec.http2.Http2ConnectionAdapter;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.sluice.core.config.Http2Options;
import io.sluice.server.channel.SluicePipeline;
import io.sluice.server.http.HttpListenerContext;

/**
 * Installs the downstream HTTP/2 pipeline on a connection:
 * {@code [meter →] h2-codec → h2-multiplex → h2-connection}, each stream a child channel with an
 * {@link H2StreamProxy}. The one entry point for every way a connection becomes HTTP/2: the
 * prior-knowledge preface ({@link H2cPrefaceSniffer}), an h2c {@code Upgrade} ({@link H2cUpgrade}),
 * and later TLS with ALPN "h2" (call {@link #install} from the ALPN handler's configure step).
 * The HTTP/1.1 handlers, if present, are removed first.
 */
public final class Http2Server {

    /** How long a closing connection (drain, idle) waits for its streams in flight at least. */
    static final long GRACEFUL_SHUTDOWN_MILLIS = 30_000;

    /** Name of the parent pipeline's flush consolidation handler, just before {@code h2-codec}. */
    static final String H2_FLUSH = "h2-flush";

    /**
     * At most this many flushes of the connection are merged into one write while it reads;
     * outside a read, every flush until the event loop runs its tasks is one write.
     */
    static final int FLUSH_LIMIT = 256;

    /**
     * Write buffer water marks of an HTTP/2 connection (HTTP/1.1 keeps Netty's 32/64 KiB). The
     * responses of many streams now leave in one flush per event-loop turn, so 64 KiB (64 answers
     * of 1 KiB) was passed in every turn under {@code -m100}: each crossing told every stream
     * channel of the connection (Http2MultiplexHandler), each of which paused and resumed its
     * upstream connection's reads (9% of the gateway's CPU samples, issue #21). A client that
     * does not read still makes the connection unwritable, after 1 MiB instead of 64 KiB, and
     * {@code write_timeout} counts from there.
     */
    static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(512 * 1024, 1024 * 1024);

    private Http2Server() {
    }

    /** Whether {@code lc}'s listener accepts HTTP/2. */
    public static boolean enabled(HttpListenerContext lc) {
        return lc.options().http2().enabled();
    }

    /**
     * Replaces the HTTP/1.1 handlers of {@code ch} (if any) with the HTTP/2 ones; the frame codec
     * then reads the connection preface. Event loop of {@code ch}.
     *
     * @return the frame codec (an upgrade hands it the client's settings)
     */
    public static Http2FrameCodec install(Channel ch, HttpListenerContext lc) {
        ChannelPipeline p = ch.pipeline();
        for (String name : new String[] {SluicePipeline.HTTP_PROXY, SluicePipeline.HTTP_READ_MARKER}) {
            if (p.get(name) != null) {
                p.remove(name);
            }
        }
        Http2FrameCodec codec = codec(lc.options().http2(), lc.options().drainGrace().toMillis());
        H2Connection conn = new H2Connection(lc);
        codec.connection().addListener(new Http2ConnectionAdapter() {
            @Override
            public void onGoAwaySent(int lastStreamId, long errorCode, io.netty.buffer.ByteBuf debugData) {
                conn.onGoAwaySent(errorCode);
            }
        });
        ChannelHandler streams = new ChannelInitializer<Http2StreamChannel>() {
            @Override
            protected void initChannel(Http2StreamChannel c) {
                c.pipeline().addLast(new H2StreamProxy(conn));
            }
        };
        if (p.get(SluicePipeline.HTTP_DECODER) != null) {
            // the decoder goes last: what it still holds is handed on to the codec
            p.addAfter(SluicePipeline.HTTP_DECODER, SluicePipeline.H2_CODEC, codec);
            p.addAfter(SluicePipeline.H2_CODEC, SluicePipeline.H2_MULTIPLEX, new Http2MultiplexHandler(streams));
            p.addAfter(SluicePipeline.H2_MULTIPLEX, SluicePipeline.H2_CONNECTION, conn);
            p.remove(SluicePipeline.HTTP_DECODER);
        } else {
            p.addLast(SluicePipeline.H2_CODEC, codec)
                    .addLast(SluicePipeline.H2_MULTIPLEX, new Http2MultiplexHandler(streams))
                    .addLast(SluicePipeline.H2_CONNECTION, conn);
        }
        tune(p);
        return codec;
    }

    /**
     * The connection's write path for many streams (issue #21): flushes merged by
     * {@link #flushConsolidation} just before {@code h2-codec}, and the {@link #WATER_MARK}.
     */
    static void tune(ChannelPipeline p) {
        p.addBefore(SluicePipeline.H2_CODEC, H2_FLUSH, flushConsolidation());
        p.channel().config().setWriteBufferWaterMark(WATER_MARK);
    }

    /**
     * The same for an h2c upstream connection ({@link H2UpstreamPool}), before its codec is added:
     * every stream's request head was flushed as the stream opened, one {@code writev} each.
     */
    static void tuneUpstream(Channel ch) {
        ch.pipeline().addLast(H2_FLUSH, flushConsolidation());
        ch.config().setWriteBufferWaterMark(WATER_MARK);
    }

    /**
     * Merges the connection's flushes into one socket write per event-loop turn (issue #21). Each
     * stream flushes its response when its upstream connection has read it, and every upstream
     * connection is its own epoll event: without this, {@code -m100} streams cost one
     * {@code writev} each on the client's connection (2.0 {@code writev} per request with an
     * HTTP/1.1 upstream, measured with {@code perf stat}). While the connection reads, flushes
     * wait for its read-complete (at most {@link #FLUSH_LIMIT}); otherwise the first flush
     * schedules one flush task on the event loop, which runs after the ready I/O events of the
     * same turn, so every response those events complete leaves in the same write.
     */
    static FlushConsolidationHandler flushConsolidation() {
        return new FlushConsolidationHandler(FLUSH_LIMIT, true);
    }

    /** The frame codec with the listener's settings and attack limits. */
    static Http2FrameCodec codec(Http2Options o, long gracefulMillis) {
        Http2Settings s = Http2Settings.defaultSettings()
                .maxConcurrentStreams(o.maxConcurrentStreams())
                .initialWindowSize(o.initialWindowSize())
                .maxHeaderListSize(o.maxHeaderListSize())
                .maxFrameSize(o.maxFrameSize());
        Http2FrameCodecBuilder b = Http2FrameCodecBuilder.forServer()
                .initialSettings(s)
                .validateHeaders(true)
                .encoderEnforceMaxQueuedControlFrames(o.maxQueuedControlFrames())
                .decoderEnforceMaxConsecutiveEmptyDataFrames(o.maxConsecutiveEmptyDataFrames())
                .decoderEnforceMaxSmallContinuationFrames(o.maxSmallContinuationFrames())
                .decoderEnforceMaxRstFramesPerWindow(o.maxRstFramesPerWindow(), (int) o.rstWindow().toSeconds())
                .gracefulShutdownTimeoutMillis(Math.max(gracefulMillis, GRACEFUL_SHUTDOWN_MILLIS));
        return b.build();
    }
}
