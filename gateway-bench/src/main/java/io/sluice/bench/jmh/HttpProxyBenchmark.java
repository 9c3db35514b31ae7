package io.sluice.bench.jmh;

import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import io.sluice.server.demo.DemoHttpBackend;
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

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One keep-alive HTTP/1.1 round trip on loopback, straight to a backend ({@code direct}) or through
 * the gateway ({@code proxy}): the difference is what the proxy costs per request, end to end
 * (decode, route, pick, pooled upstream, encode, two extra socket hops).
 *
 * <p>{@code java -jar gateway-bench/target/benchmarks.jar jmh HttpProxyBenchmark -t 2}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class HttpProxyBenchmark {

    @Param({"direct", "proxy"})
    public String target;

    private DemoHttpBackend backend;
    private Gateway gateway;
    private int port;

    @Setup(Level.Trial)
    public void start() throws Exception {
        backend = DemoHttpBackend.start("127.0.0.1", 0, "");
        if ("proxy".equals(target)) {
            ListenerConfig l = ListenerConfig.http("web", "127.0.0.1", 0, List.of(RouteConfig.to("c")));
            ClusterConfig c = ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", backend.port(), 1)));
            gateway = Gateway.builder().config(new GatewayConfig(List.of(l), List.of(c), AdminConfig.disabled(),
                    new TransportConfig("auto", 1, 1024), Duration.ofSeconds(1))).build().start().join();
            port = gateway.port("web");
        } else {
            port = backend.port();
        }
    }

    @TearDown(Level.Trial)
    public void stop() {
        if (gateway != null) {
            gateway.close();
        }
        backend.close();
    }

    /** A blocking keep-alive client, one per benchmark thread. */
    @State(Scope.Thread)
    public static class Client {
        private static final byte[] REQUEST = "GET / HTTP/1.1\r\nHost: bench\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        private Socket socket;
        private OutputStream out;
        private InputStream in;
        private final byte[] buf = new byte[8192];

        @Setup(Level.Trial)
        public void connect(HttpProxyBenchmark b) throws IOException {
            socket = new Socket("127.0.0.1", b.port);
            socket.setTcpNoDelay(true);
            out = socket.getOutputStream();
            in = socket.getInputStream();
        }

        @TearDown(Level.Trial)
        public void close() throws IOException {
            socket.close();
        }

        /** Sends one request and reads its whole response; returns the status code. */
        int roundTrip() throws IOException {
            out.write(REQUEST);
            int n = 0;
            int headEnd = -1;
            long contentLength = -1;
            while (true) {
                int r = in.read(buf, n, buf.length - n);
                if (r < 0) {
                    throw new IOException("connection closed");
                }
                n += r;
                if (headEnd < 0) {
                    headEnd = indexOfHeadEnd(buf, n);
                    if (headEnd >= 0) {
                        contentLength = contentLength(buf, headEnd);
                    }
                }
                if (headEnd >= 0 && n >= headEnd + contentLength) {
                    return (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
                }
            }
        }

        private static int indexOfHeadEnd(byte[] b, int n) {
            for (int i = 3; i < n; i++) {
                if (b[i] == '\n' && b[i - 1] == '\r' && b[i - 2] == '\n' && b[i - 3] == '\r') {
                    return i + 1;
                }
            }
            return -1;
        }

        private static long contentLength(byte[] b, int headEnd) {
            String head = new String(b, 0, headEnd, StandardCharsets.US_ASCII).toLowerCase();
            int i = head.indexOf("content-length:");
            if (i < 0) {
                throw new IllegalStateException("benchmark backend must send content-length");
            }
            int eol = head.indexOf('\r', i);
            return Long.parseLong(head.substring(i + "content-length:".length(), eol).trim());
        }
    }

    @Benchmark
    public int roundTrip(Client client) throws IOException {
        return client.roundTrip();
    }
}
