package io.sluice.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.sluice.codec.bolt.BoltFrame;
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

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The routing header read in place from a frame's header map (what routing does per request):
 * sofaload's one-entry map, and a SOFARPC-like map of 8 entries with {@code service} last; and a
 * key that is absent ({@code sofa_head_target_service}, a full scan). Run with {@code -prof gc}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class BoltHeaderLookupBenchmark {

    @Param({"1", "8"})
    public int entries;
    BoltFrame frame;
    String last;

    @Setup(Level.Trial)
    public void setUp() {
        Map<String, String> h = new LinkedHashMap<>();
        for (int i = 2; i < entries; i++) {
            h.put("rpc_trace_context.sofaTraceId" + i, "0a0fe8ac1574318219401100" + i);
        }
        if (entries > 1) {
            h.put("sofa_head_method_name", "echoStr");
        }
        h.put("service", "com.alipay.test.TestService:1.0"); // last: the whole map is scanned
        ByteBuf c = PooledByteBufAllocator.DEFAULT.heapBuffer(16).writeBytes(new byte[16]);
        frame = BoltCodecBenchmark.request(BoltFraming.V1, c, h);
        last = frame.service();
        c.release();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        frame.release();
    }

    /** The {@code service} header, as routing reads it. */
    @Benchmark
    public String serviceLookup() {
        return frame.service();
    }

    /** The {@code service} header when the connection's previous value is passed in: recognised in place, no String built. */
    @Benchmark
    public String serviceLookupRepeated() {
        return frame.service(last);
    }

    /** A key that is absent ({@code sofa_head_target_service}): a full scan, no value built. */
    @Benchmark
    public String absentKeyLookup() {
        return frame.targetService();
    }
}
