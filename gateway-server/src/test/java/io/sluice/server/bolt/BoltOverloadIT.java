package io.sluice.server.bolt;

import com.alipay.remoting.BizContext;
import com.alipay.remoting.rpc.RpcServer;
import com.alipay.remoting.rpc.protocol.SyncUserProcessor;
import io.sluice.codec.bolt.BoltFraming;
import io.sluice.codec.bolt.BoltStatus;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.CircuitBreakerConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Bolt request over the cluster's {@code max_requests} is answered SERVER_THREADPOOL_BUSY on its
 * own request id with a non-empty body that names the limit (bolt clients need a body), while the
 * request holding the slot is still served.
 */
@Timeout(30)
class BoltOverloadIT {

    @Test
    void overTheBreakersLimitTheAnswerIsServerBusyWithABody() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        RpcServer server = new RpcServer("127.0.0.1", 0, true);
        server.registerUserProcessor(new SyncUserProcessor<String>() {
            @Override
            public Object handleRequest(BizContext ctx, String req) throws Exception {
                release.await(20, TimeUnit.SECONDS);
                return "ok:" + req;
            }

            @Override
            public String interest() {
                return String.class.getName();
            }
        });
        server.startup();
        ClusterConfig c = ClusterConfig.builder().name("rpc").protocol(Protocol.BOLT)
                .hosts(new HostConfig("127.0.0.1", server.port(), 1))
                .circuitBreakers(CircuitBreakerConfig.builder().maxRequests(1).build()).build();
        ListenerConfig l = ListenerConfig.builder().name("bolt").protocol(Protocol.BOLT)
                .bolt(BoltOptions.builder().defaultCluster("rpc").build()).build();
        try (Gateway gw = GatewayFixture.start(GatewayConfig.builder().listeners(l).clusters(c).admin(AdminConfig.disabled())
                .transport(TransportConfig.builder().workerThreads(1).build()).drainTimeout(Duration.ofSeconds(1)).build());
             RawBolt raw = new RawBolt(gw.port("bolt"))) {
            raw.write(RawBolt.stringRequest(BoltFraming.V1, 7, "java.lang.String", Map.of(), "held"));
            raw.write(RawBolt.stringRequest(BoltFraming.V1, 8, "java.lang.String", Map.of(), "shed"));
            RawBolt.Response shed = raw.read();
            assertThat(shed.id()).isEqualTo(8);
            assertThat(shed.status()).isEqualTo(BoltStatus.SERVER_THREADPOOL_BUSY);
            assertThat(shed.content()).isNotEmpty();
            assertThat(shed.text()).contains("max_requests");
            release.countDown();
            RawBolt.Response held = raw.read();
            assertThat(held.id()).isEqualTo(7);
            assertThat(held.status()).isEqualTo(BoltStatus.SUCCESS);
            assertThat(held.text()).endsWith("ok:held");
        } finally {
            release.countDown();
            server.shutdown();
        }
    }
}
