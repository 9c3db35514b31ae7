package io.sluice.server;

import io.netty.channel.uring.IoUring;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.testing.RawClient;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The io_uring transport accepts and proxies, started the way the gateway always starts: bound
 * with auto-read off, switched on at once. (Netty 4.2.18's io_uring server socket never accepted
 * when auto-read was switched on while its bind was still in flight: most starts hung.)
 * Skipped where io_uring is unavailable (old kernel, or disabled by sysctl or seccomp).
 */
class IoUringTransportIT {

    @ParameterizedTest(name = "workers {0}, reuse_port {1}")
    @CsvSource({"1, false", "2, false", "2, true"})
    void everyStartAcceptsAndProxies(int workers, boolean reusePort) throws Exception {
        assumeTrue(IoUring.isAvailable(), () -> "io_uring unavailable: " + IoUring.unavailabilityCause());
        try (TestBackend backend = TestBackend.start()) {
            for (int start = 0; start < 5; start++) {
                ListenerConfig l = new ListenerConfig("web", Protocol.HTTP, "127.0.0.1", 0, List.of(RouteConfig.to("c")),
                        HttpOptions.defaults(), null);
                GatewayConfig c = new GatewayConfig(List.of(l),
                        List.of(ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", backend.port(), 1)))),
                        AdminConfig.disabled(), new TransportConfig("io_uring", workers, 128, reusePort), Duration.ofSeconds(5));
                try (Gateway g = Gateway.builder().config(c).random(new SplittableRandom(7))
                        .build().start().orTimeout(30, TimeUnit.SECONDS).join()) {
                    assertThat(g.transport()).isEqualTo("io_uring");
                    for (int i = 0; i < 4; i++) {
                        try (RawClient client = new RawClient(g.port("web"))) {
                            assertThat(client.send("GET /x HTTP/1.1\r\nHost: t\r\n\r\n").read().status())
                                    .as("start %d, connection %d", start, i).isEqualTo(200);
                        }
                    }
                }
            }
        }
    }
}
