package io.sluice.server.policy;

import com.alipay.remoting.BizContext;
import com.alipay.remoting.rpc.RpcClient;
import com.alipay.remoting.rpc.RpcResponseFuture;
import com.alipay.remoting.rpc.RpcServer;
import com.alipay.remoting.rpc.exception.InvokeServerBusyException;
import com.alipay.remoting.rpc.protocol.SyncUserProcessor;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The cluster circuit breaker on the Bolt path, with the real bolt {@code RpcClient} and
 * {@code RpcServer}: 10× the breaker's {@code max_requests} at once → the excess is answered
 * SERVER_THREADPOOL_BUSY at once, with a body (the client sees {@link InvokeServerBusyException}),
 * and the server never holds more than the limit.
 */
@Timeout(60)
class BoltBreakerIT {

    @Test
    void tenTimesTheLimitFailsTheExcessFastWithServerBusy() throws Exception {
        int limit = 5;
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger peak = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        RpcServer server = new RpcServer("127.0.0.1", 0, true);
        server.registerUserProcessor(new SyncUserProcessor<String>() {
            @Override
            public Object handleRequest(BizContext ctx, String req) throws Exception {
                peak.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                try {
                    release.await(30, TimeUnit.SECONDS);
                    return req;
                } finally {
                    inFlight.decrementAndGet();
                }
            }

            @Override
            public String interest() {
                return String.class.getName();
            }
        });
        server.startup();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ClusterConfig c = ClusterConfig.builder().name("rpc").protocol(Protocol.BOLT)
                .hosts(new HostConfig("127.0.0.1", server.port(), 1))
                .circuitBreakers(CircuitBreakerConfig.builder().maxRequests(limit).build()).build();
        ListenerConfig l = ListenerConfig.builder().name("bolt").protocol(Protocol.BOLT)
                .bolt(BoltOptions.builder().defaultCluster("rpc").build()).build();
        RpcClient client = new RpcClient();
        client.startup();
        try (Gateway gw = Gateway.builder().config(GatewayConfig.builder().listeners(l).clusters(c)
                        .admin(AdminConfig.disabled()).transport(TransportConfig.builder().workerThreads(2).build())
                        .drainTimeout(Duration.ofSeconds(1)).build())
                .meterRegistry(registry).random(new SplittableRandom(7)).build().start().orTimeout(30, TimeUnit.SECONDS).join()) {
            String addr = "127.0.0.1:" + gw.port("bolt");
            List<RpcResponseFuture> fs = new ArrayList<>();
            for (int i = 0; i < 10 * limit; i++) {
                fs.add(client.invokeWithFuture(addr, "req-" + i, 20_000));
            }
            int busy = 0;
            List<RpcResponseFuture> held = new ArrayList<>();
            long t0 = System.nanoTime();
            for (RpcResponseFuture f : fs) {
                if (held.size() == limit) {
                    Throwable t = catchThrowable(() -> f.get(10_000));
                    assertThat(t).isInstanceOf(InvokeServerBusyException.class);
                    busy++;
                    continue;
                }
                Throwable t = catchThrowable(() -> f.get(50));
                if (t instanceof InvokeServerBusyException) {
                    busy++;
                } else {
                    held.add(f);
                }
            }
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertThat(busy).isEqualTo(9 * limit);
            assertThat(held).hasSize(limit);
            assertThat(ms).as("the excess fails fast").isLessThan(10_000);
            assertThat(peak.get()).as("the server never holds more than the limit").isEqualTo(limit);
            assertThat(registry.get("sluice.cluster.breaker.overflows").tags("cluster", "rpc", "resource", "requests")
                    .functionCounter().count()).isEqualTo(9 * limit);
            release.countDown();
            for (RpcResponseFuture f : held) {
                assertThat((String) f.get(10_000)).startsWith("req-");
            }
            assertThat(registry.get("sluice.cluster.breaker.remaining").tags("cluster", "rpc", "resource", "requests")
                    .gauge().value()).isEqualTo(limit);
        } finally {
            release.countDown();
            client.shutdown();
            server.shutdown();
        }
    }
}
