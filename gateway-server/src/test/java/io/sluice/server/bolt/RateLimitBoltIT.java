package io.sluice.server.bolt;

import com.alipay.remoting.rpc.RpcClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.codec.bolt.BoltFraming;
import io.sluice.codec.bolt.BoltStatus;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RateLimitConfig;
import io.sluice.core.config.RateLimitRule;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import io.sluice.server.demo.DemoBoltBackend;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Bolt rate limits end to end with the real bolt {@code RpcClient} and {@code RpcServer}: a
 * service-level rule answers over-limit requests with SERVER_THREADPOOL_BUSY and a reason.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RateLimitBoltIT {

    private static final String SERVICE = "com.alipay.test.TestService:1.0";

    private DemoBoltBackend echo;
    private Gateway gw;
    private RpcClient client;
    private final MeterRegistry registry = new SimpleMeterRegistry();

    @BeforeAll
    void start() {
        echo = DemoBoltBackend.start("127.0.0.1", 0);
        ListenerConfig l = ListenerConfig.builder().name("rpc").protocol(Protocol.BOLT)
                .bolt(BoltOptions.builder().maxFrameLength(4 << 20).build())
                .routes(new RouteConfig("all", RouteMatch.ANY, "echo", null, null)).build();
        ClusterConfig c = ClusterConfig.builder().name("echo").protocol(Protocol.BOLT)
                .hosts(List.of(new HostConfig("127.0.0.1", echo.port(), 1))).build();
        GatewayConfig config = GatewayConfig.builder().listeners(l).clusters(c).admin(AdminConfig.disabled())
                .transport(TransportConfig.builder().workerThreads(2).backlog(128).build())
                .rateLimit(RateLimitConfig.builder().rules(
                        // one service: 2 per hour; the plain RpcClient's requests (no service header) are not counted by it
                        RateLimitRule.perRoute("test-service", 2, Duration.ofHours(1), "all").withBolt(SERVICE, null),
                        // the route as a whole: 5 per hour
                        RateLimitRule.perRoute("route", 5, Duration.ofHours(1), "all")).build())
                .build();
        gw = Gateway.builder().config(config).meterRegistry(registry).random(new SplittableRandom(7))
                .build().start().orTimeout(30, TimeUnit.SECONDS).join();
        client = new RpcClient();
        client.startup();
    }

    @AfterAll
    void stop() {
        client.shutdown();
        gw.close();
        echo.close();
    }

    @Test
    void serviceLimitAnswersServerThreadpoolBusyWithAReasonThenTheRouteLimitTheRealClient() throws Exception {
        try (RawBolt raw = new RawBolt(gw.port("rpc"))) {
            for (int id = 1; id <= 3; id++) {
                raw.write(RawBolt.stringRequest(BoltFraming.V1, id, "java.lang.String", Map.of("service", SERVICE), "hi" + id));
                RawBolt.Response r = raw.read();
                assertThat(r.id()).isEqualTo(id);
                if (id <= 2) {
                    assertThat(r.status()).isEqualTo(BoltStatus.SUCCESS);
                } else {
                    assertThat(r.status()).isEqualTo(BoltStatus.SERVER_THREADPOOL_BUSY);
                    assertThat(r.content()).isNotEmpty();
                    assertThat(r.text()).contains("rate limited on route all").contains("retry after");
                }
            }
        }
        // the route rule has 5: 2 taken above; the real client gets the other 3, then SERVER_THREADPOOL_BUSY
        String addr = "127.0.0.1:" + gw.port("rpc");
        for (int i = 0; i < 3; i++) {
            assertThat((String) client.invokeSync(addr, "ok" + i, 5000)).isEqualTo("ok" + i);
        }
        Throwable busy = catchThrowable(() -> client.invokeSync(addr, "one too many", 5000));
        assertThat(busy).isNotNull();
        assertThat(String.valueOf(busy.getMessage())).containsIgnoringCase("thread pool busy");
        assertThat(registry.find("sluice.ratelimit.requests").tags("rule", "test-service", "result", "limited")
                .counter().count()).isEqualTo(1);
        assertThat(registry.find("sluice.ratelimit.requests").tags("rule", "route", "result", "limited")
                .counter().count()).isEqualTo(1);
    }
}
