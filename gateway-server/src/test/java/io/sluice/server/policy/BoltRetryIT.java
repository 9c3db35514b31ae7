package io.sluice.server.policy;

import com.alipay.remoting.BizContext;
import com.alipay.remoting.rpc.RpcClient;
import com.alipay.remoting.rpc.RpcServer;
import com.alipay.remoting.rpc.protocol.SyncUserProcessor;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RetryOn;
import io.sluice.core.config.RetryPolicyConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.Ports;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bolt retries with the real bolt {@code RpcClient} and {@code RpcServer}: a server that rejects
 * every second request (its business pool full: SERVER_THREADPOOL_BUSY) and a dead host among live
 * ones (ERROR_COMM) cost the clients nothing when the cluster's retry policy says so.
 */
@Timeout(60)
class BoltRetryIT {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<AutoCloseable> closing = new ArrayList<>();
    private final ExecutorService pool = Executors.newFixedThreadPool(4);

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        pool.shutdownNow();
    }

    private RpcServer server(Executor executor, AtomicInteger served) {
        RpcServer s = new RpcServer("127.0.0.1", 0, true);
        s.registerUserProcessor(new SyncUserProcessor<String>() {
            @Override
            public Object handleRequest(BizContext ctx, String req) {
                served.incrementAndGet();
                return "ok:" + req;
            }

            @Override
            public String interest() {
                return String.class.getName();
            }

            @Override
            public Executor getExecutor() {
                return executor;
            }
        });
        s.startup();
        closing.add(s::shutdown);
        return s;
    }

    private String start(List<HostConfig> hosts, RetryPolicyConfig policy) {
        ClusterConfig c = ClusterConfig.builder().name("rpc").protocol(Protocol.BOLT).hosts(hosts)
                .connectTimeout(Duration.ofSeconds(1)).retryPolicy(policy).build();
        ListenerConfig l = ListenerConfig.builder().name("bolt").protocol(Protocol.BOLT)
                .bolt(BoltOptions.builder().defaultCluster("rpc").build()).build();
        Gateway gw = Gateway.builder().config(GatewayConfig.builder().listeners(l).clusters(c).admin(AdminConfig.disabled())
                        .transport(TransportConfig.builder().workerThreads(1).build()).drainTimeout(Duration.ofSeconds(1)).build())
                .meterRegistry(registry).random(new SplittableRandom(7)).build().start().orTimeout(30, TimeUnit.SECONDS).join();
        closing.add(gw);
        return "127.0.0.1:" + gw.port("bolt");
    }

    private RpcClient client() {
        RpcClient c = new RpcClient();
        c.startup();
        closing.add(c::shutdown);
        return c;
    }

    private double retries(String outcome) {
        return registry.get("sluice.cluster.retries").tags("cluster", "rpc", "outcome", outcome).functionCounter().count();
    }

    @Test
    void aServerBusyEverySecondRequestIsRetriedAndClientsSeeNoError() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        AtomicInteger rejected = new AtomicInteger();
        AtomicInteger served = new AtomicInteger();
        Executor flaky = task -> {
            if (calls.getAndIncrement() % 2 == 1) {
                rejected.incrementAndGet();
                throw new RejectedExecutionException("every second request");
            }
            pool.execute(task);
        };
        RpcServer s = server(flaky, served);
        String addr = start(List.of(new HostConfig("127.0.0.1", s.port(), 1)),
                RetryPolicyConfig.builder().retryOn(RetryOn.SERVER_THREADPOOL_BUSY).numRetries(2).build());
        RpcClient c = client();
        for (int i = 0; i < 60; i++) {
            assertThat((String) c.invokeSync(addr, "r" + i, 10_000)).isEqualTo("ok:r" + i);
        }
        assertThat(rejected.get()).isGreaterThan(20);
        assertThat(retries("retried")).isEqualTo(rejected.get());
        assertThat(retries("success")).isEqualTo(rejected.get());
        assertThat(served.get()).isEqualTo(60);
    }

    @Test
    void aDeadHostIsRetriedOnALiveOne() throws Exception {
        AtomicInteger served = new AtomicInteger();
        RpcServer live = server(pool, served);
        int dead = Ports.free();
        String addr = start(List.of(new HostConfig("127.0.0.1", dead, 1), new HostConfig("127.0.0.1", live.port(), 1)),
                RetryPolicyConfig.defaults()); // connect-failure
        RpcClient c = client();
        for (int i = 0; i < 40; i++) {
            assertThat((String) c.invokeSync(addr, "r" + i, 10_000)).isEqualTo("ok:r" + i);
        }
        assertThat(retries("retried")).isPositive();
        assertThat(retries("success")).isEqualTo(retries("retried"));
        assertThat(served.get()).isEqualTo(40);
    }
}
