package io.sluice.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.sluice.codec.bolt.BoltFrame;
import io.sluice.codec.bolt.BoltFrameDecoder;
import io.sluice.codec.bolt.BoltFrameEncoder;
import io.sluice.codec.bolt.BoltFrames;
import io.sluice.codec.bolt.BoltFraming;
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

import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The Bolt codec's per-request work in the proxy, with 1 KiB and 64 KiB bodies, v1 and v2 with
 * CRC32:
 * <ul>
 *   <li>{@code decode}: one whole frame through {@link BoltFrameDecoder} on an {@link EmbeddedChannel}
 *       (fixed header parsed, CRC checked, the frame a retained slice of the input) and released;</li>
 *   <li>{@code rewriteRequestId}: what the proxy does before writing a request upstream or a response
 *       downstream: patch the id in place (and recompute the CRC for v2+CRC), then hand the bytes
 *       to {@link BoltFrameEncoder} (no copy);</li>
 *   <li>{@code buildFrame}: a whole frame built from class, header map and content, as a client
 *       encodes (the proxy does this only for its own error answers);</li>
 * </ul>
 * Header-key lookups are in {@link BoltHeaderLookupBenchmark}.
 * Run with {@code -prof gc} for bytes/op: {@code java -jar gateway-bench/target/benchmarks.jar jmh
 * BoltCodecBenchmark -prof gc}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class BoltCodecBenchmark {

    @Param({"1024", "65536"})
    public int body;

    @Param({"V1", "V2_VER2_CRC"})
    public String framing;

    private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    private EmbeddedChannel decoder;
    private EmbeddedChannel harness;
    private EmbeddedChannel encoder;
    private ByteBuf wire;
    private BoltFrame frame;
    private ByteBuf content;
    private int id;

    @Setup(Level.Trial)
    public void setUp() {
        content = alloc.directBuffer(body);
        for (int i = 0; i < body; i++) {
            content.writeByte('0' + i % 10);
        }
        BoltFrame f = request(BoltFraming.valueOf(framing), content, Map.of("service", "com.alipay.test.TestService:1.0"));
        ByteBuf c = f.content();
        wire = alloc.directBuffer(c.readableBytes()).writeBytes(c, c.readerIndex(), c.readableBytes());
        frame = f;
        decoder = new EmbeddedChannel(new BoltFrameDecoder());
        harness = new EmbeddedChannel();
        // a sink that releases what the encoder hands on, so the channel holds nothing
        encoder = new EmbeddedChannel(new ChannelOutboundHandlerAdapter() {
            @Override
            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise p) {
                ReferenceCountUtil.release(msg);
            }
        }, BoltFrameEncoder.INSTANCE);
    }

    static BoltFrame request(BoltFraming framing, ByteBuf content, Map<String, String> headers) {
        return BoltFrames.request(PooledByteBufAllocator.DEFAULT, framing, false, 1, 1, 5000,
                "com.alipay.sofa.rpc.core.request.SofaRequest", headers, content);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        decoder.finishAndReleaseAll();
        harness.finishAndReleaseAll();
        encoder.finishAndReleaseAll();
        wire.release();
        frame.release();
        content.release();
    }

    /** Decode one frame from the wire and release it. Returns its request id. */
    @Benchmark
    public int decode() {
        decoder.writeInbound(wire.retainedDuplicate());
        BoltFrame f = decoder.readInbound();
        int rid = f.requestId();
        f.release();
        return rid;
    }

    /**
     * The harness of {@link #decode} without the decoder: the same buffer through an empty
     * {@link EmbeddedChannel}. {@code decode} minus this is the decoder's own cost.
     */
    @Benchmark
    public int decodeHarness() {
        harness.writeInbound(wire.retainedDuplicate());
        ByteBuf b = harness.readInbound();
        int n = b.readableBytes();
        b.release();
        return n;
    }

    /** Patch the id in place (CRC recomputed if present) and write the frame's bytes through the encoder. */
    @Benchmark
    public int rewriteRequestId() {
        frame.rewriteRequestId(++id);
        encoder.writeOneOutbound(frame.retain(), encoder.voidPromise());
        return id;
    }

    /** Build a whole frame from its parts (what a client's encoder does) and release it. */
    @Benchmark
    public int buildFrame() {
        BoltFrame f = request(BoltFraming.valueOf(framing), content, Map.of("service", "com.alipay.test.TestService:1.0"));
        int n = f.frameLength();
        f.release();
        return n;
    }
}
