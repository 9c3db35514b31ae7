package io.sluice.bench.bolt;

import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import io.sluice.server.demo.DemoBoltBackend;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** bolt-load → gateway → the demo Bolt backend (a real bolt RpcServer), with sofaload's request and report. */
class BoltLoadIT {

    @Test
    void drivesTheGatewayWithSofaloadsRequestAndPrintsSofaloadsReport() throws Exception {
        DemoBoltBackend backend = DemoBoltBackend.start("127.0.0.1", 0);
        drive(backend, 4, 4);
        assertThat(backend.lastHandlerThread()).as("bolt's business pool").startsWith("Bolt-default-executor");
    }

    /**
     * {@code bolt-server --io-thread}, the benchmark scripts' backend: a request that arrives alone
     * is answered on the connection's I/O thread (one call in flight, so no read carries two; bolt
     * hands a batch decoded from one read to its default executor, once per batch).
     */
    @Test
    void ioThreadBackendAnswersOnItsIoThread() throws Exception {
        DemoBoltBackend backend = DemoBoltBackend.start("127.0.0.1", 0, true);
        drive(backend, 1, 1);
        assertThat(backend.lastHandlerThread()).as("bolt's netty worker").startsWith("Rpc-netty-server-worker");
    }

    private static void drive(DemoBoltBackend backend, int connections, int inFlight) throws Exception {
        ListenerConfig l = ListenerConfig.builder().name("bolt").protocol(Protocol.BOLT)
                .bolt(BoltOptions.builder().maxFrameLength(1 << 20).defaultCluster("rpc").build()).build();
        ClusterConfig c = ClusterConfig.builder().name("rpc").protocol(Protocol.BOLT)
                .hosts(new HostConfig("127.0.0.1", backend.port(), 1)).build();
        try (Gateway gw = Gateway.builder().config(new GatewayConfig(List.of(l), List.of(c), AdminConfig.disabled(),
                new TransportConfig("auto", 1, 128), Duration.ofSeconds(1)))
                        .build().start().orTimeout(30, TimeUnit.SECONDS).join()) {
            BoltLoad.Options o = BoltLoad.parse(new String[] {"-D", "1", "--warm-up-time=200ms", "-c", String.valueOf(connections),
                    "-m", String.valueOf(inFlight), "-t", String.valueOf(Math.min(2, connections)), "-p", "sofarpc",
                    "sofarpc://127.0.0.1:" + gw.port("bolt")});
            BoltLoad.Result r = BoltLoad.run(o);
            assertThat(r.succeeded()).isGreaterThan(100);
            assertThat(r.failed()).isZero();
            assertThat(r.statusCounts()[0]).isEqualTo(r.succeeded());
            assertThat(backend.handled()).isGreaterThanOrEqualTo(r.succeeded());
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            BoltLoad.print(r, new PrintStream(buf, true, StandardCharsets.UTF_8));
            String out = buf.toString(StandardCharsets.UTF_8);
            assertThat(out).contains("finished in ", " req/s", "requests: ", r.succeeded() + " succeeded",
                    "sofaRPC status codes: \n\t" + r.succeeded() + " success", "time for request:",
                    "  Latency  Distribution", "   99%");
        } finally {
            backend.close();
        }
    }

    @Test
    void noRouteAnswersAreCountedNotHung() throws Exception {
        ListenerConfig l = new ListenerConfig("bolt", Protocol.BOLT, "127.0.0.1", 0, List.of(), null, null);
        ClusterConfig c = ClusterConfig.of("unused", List.of(new HostConfig("127.0.0.1", 1, 1)));
        try (Gateway gw = Gateway.builder().config(new GatewayConfig(List.of(l), List.of(c), AdminConfig.disabled(),
                new TransportConfig("auto", 1, 128), Duration.ofSeconds(1)))
                        .build().start().orTimeout(30, TimeUnit.SECONDS).join()) {
            BoltLoad.Result r = BoltLoad.run(BoltLoad.parse(new String[] {"-n", "50", "-c", "2", "-m", "1",
                    "sofarpc://127.0.0.1:" + gw.port("bolt")}));
            assertThat(r.succeeded()).isZero();
            assertThat(r.statusCounts()[6]).isEqualTo(50); // NO_PROCESSOR, each with a body, so nothing hangs
        }
    }
}
