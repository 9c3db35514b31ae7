package io.sluice.bench.jmh;

import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HeaderRules;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RequestTracing;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteRules;
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
 * The A/B of the traffic features on the request path: one keep-alive round trip through the
 * gateway with nothing configured ({@code plain}) and with a request header rule, a response header
 * rule, generated request ids and {@code traceparent} on every request ({@code rules}). The target
 * is under 3 % more time (and CPU) per request; run on a quiet machine:
 *
 * <p>{@code java -jar gateway-bench/target/benchmarks.jar jmh TrafficHeadersBenchmark -t 2 -prof gc}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class TrafficHeadersBenchmark {

    @Param({"plain", "rules"})
    public String traffic;

    private DemoHttpBackend backend;
    private Gateway gateway;
    private int port;

    @Setup(Level.Trial)
    public void start() throws Exception {
        backend = DemoHttpBackend.start("127.0.0.1", 0, "");
        boolean rules = "rules".equals(traffic);
        RouteConfig route = RouteConfig.to("c");
        HttpOptions http = HttpOptions.defaults();
        if (rules) {
            route = route.withRules(RouteRules.builder()
                    .requestHeaders(new HeaderRules(List.of(), List.of(new HeaderRules.Header("x-gateway-route", "%ROUTE_NAME%")),
                            List.of("x-internal")))
                    .responseHeaders(new HeaderRules(List.of(new HeaderRules.Header("x-served-by", "%UPSTREAM_HOST%")),
                            List.of(), List.of()))
                    .build());
            http = http.toBuilder().tracing(new RequestTracing(true, false, true)).build();
        }
        ListenerConfig l = ListenerConfig.builder().name("web").address("127.0.0.1").port(0).routes(route).http(http).build();
        ClusterConfig c = ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", backend.port(), 1)));
        gateway = Gateway.builder().config(new GatewayConfig(List.of(l), List.of(c), AdminConfig.disabled(),
                new TransportConfig("auto", 1, 1024), Duration.ofSeconds(1))).build().start().join();
        port = gateway.port("web");
    }

    @TearDown(Level.Trial)
    public void stop() {
        gateway.close();
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
        public void connect(TrafficHeadersBenchmark b) throws IOException {
            socket = new Socket("127.0.0.1", b.port);
            socket.setTcpNoDelay(true);
            out = socket.getOutputStream();
            in = socket.getInputStream();
        }

        @TearDown(Level.Trial)
        public void close() throws IOException {
            socket.close();
        }

        int roundTrip() throws IOException {
            out.write(REQUEST);
            int n = 0;
            int headEnd = -1;
            long length = -1;
            while (true) {
                int r = in.read(buf, n, buf.length - n);
                if (r < 0) {
                    throw new IOException("connection closed");
                }
                n += r;
                if (headEnd < 0) {
                    for (int i = 3; i < n && headEnd < 0; i++) {
                        if (buf[i] == '\n' && buf[i - 1] == '\r' && buf[i - 2] == '\n' && buf[i - 3] == '\r') {
                            headEnd = i + 1;
                        }
                    }
                    if (headEnd >= 0) {
                        String head = new String(buf, 0, headEnd, StandardCharsets.US_ASCII).toLowerCase();
                        int at = head.indexOf("content-length:");
                        length = Long.parseLong(head.substring(at + 15, head.indexOf('\r', at)).trim());
                    }
                }
                if (headEnd >= 0 && n >= headEnd + length) {
                    return buf[9];
                }
            }
        }
    }

    @Benchmark
    public int roundTrip(Client client) throws IOException {
        return client.roundTrip();
    }
}
