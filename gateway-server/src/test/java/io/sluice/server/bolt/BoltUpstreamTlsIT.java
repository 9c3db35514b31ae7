package io.sluice.server.bolt;

import com.alipay.remoting.BizContext;
import com.alipay.remoting.config.BoltServerOption;
import com.alipay.remoting.rpc.RpcClient;
import com.alipay.remoting.rpc.RpcServer;
import com.alipay.remoting.rpc.protocol.SyncUserProcessor;
import io.micrometer.core.instrument.Counter;
import io.sluice.codec.bolt.BoltFraming;
import io.sluice.codec.bolt.BoltStatus;
import io.sluice.core.cluster.HealthStatus;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HealthCheckConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.TransportConfig;
import io.sluice.core.config.UpstreamTlsConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.TestPki;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Bolt re-encryption: the real bolt {@code RpcClient} speaks cleartext to the gateway, the gateway
 * speaks TLS to the real bolt {@code RpcServer} with its own SSL options ({@code bolt.server.ssl.*}:
 * a PKCS#12 keystore made by the test). A certificate the cluster does not trust is an ERROR_COMM
 * answer whose message names the reason.
 */
class BoltUpstreamTlsIT {

    @TempDir
    Path dir;

    private static RpcServer tlsServer(Path keystore, String password, AtomicInteger calls) {
        RpcServer s = new RpcServer("127.0.0.1", 0, true);
        s.option(BoltServerOption.SRV_SSL_ENABLE, true);
        s.option(BoltServerOption.SRV_SSL_KEYSTORE_TYPE, "PKCS12");
        s.option(BoltServerOption.SRV_SSL_KEYSTORE, keystore.toString());
        s.option(BoltServerOption.SRV_SSL_KEYSTORE_PASS, password);
        s.option(BoltServerOption.SRV_SSL_KMF_ALGO, "SunX509");
        s.registerUserProcessor(new SyncUserProcessor<String>() {
            @Override
            public Object handleRequest(BizContext ctx, String req) {
                calls.incrementAndGet();
                return "tls echo: " + req;
            }

            @Override
            public String interest() {
                return String.class.getName();
            }
        });
        s.startup();
        return s;
    }

    private static GatewayConfig config(int port, UpstreamTlsConfig tls) {
        // the bolt heartbeat probe goes over TLS too
        HealthCheckConfig hc = HealthCheckConfig.builder().probe(HealthCheckConfig.BOLT).interval(Duration.ofMillis(100))
                .timeout(Duration.ofMillis(2000)).healthyThreshold(1).unhealthyThreshold(1).build();
        ClusterConfig c = ClusterConfig.builder().name("up").protocol(Protocol.BOLT).healthCheck(hc)
                .hosts(new HostConfig("127.0.0.1", port, 1)).connectTimeout(Duration.ofSeconds(3)).tls(tls).build();
        ListenerConfig l = ListenerConfig.builder().name("bolt").protocol(Protocol.BOLT)
                .bolt(BoltOptions.builder().maxFrameLength(4 << 20).defaultCluster("up").build()).build();
        return GatewayConfig.builder().listeners(l).clusters(c).admin(AdminConfig.disabled())
                .transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                .drainTimeout(Duration.ofSeconds(1)).build();
    }

    @Test
    void theRealRpcClientReachesATlsRpcServerThroughTheGateway() throws Exception {
        TestPki pki = TestPki.create(dir, "bolt");
        Path ks = pki.leaf("bolt-server", "127.0.0.1").pkcs12("changeit");
        AtomicInteger calls = new AtomicInteger();
        RpcServer server = tlsServer(ks, "changeit", calls);
        RpcClient client = new RpcClient();
        client.startup();
        try (Gateway g = GatewayFixture.start(config(server.port(),
                UpstreamTlsConfig.builder().caFile(pki.caFile().toString()).build()))) {
            String addr = "127.0.0.1:" + g.port("bolt");
            assertThat(client.invokeSync(addr, "hello", 10_000)).isEqualTo("tls echo: hello");
            assertThat(client.invokeSync(addr, "again", 10_000)).isEqualTo("tls echo: again");
            assertThat(calls).hasValue(2);
            Counter ok = g.meterRegistry().find("sluice.upstream.tls.handshakes").tags("cluster", "up", "result", "success").counter();
            // a host starts healthy: wait for a probe over TLS to have succeeded, not just for the state
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                Counter probes = g.meterRegistry().find("sluice.health_check.attempts")
                        .tags("cluster", "up", "result", "success").counter();
                return probes != null && probes.count() > 0;
            });
            assertThat(g.cluster("up").hosts().get(0).health()).isEqualTo(HealthStatus.HEALTHY);
        } finally {
            client.shutdown();
            server.shutdown();
        }
    }

    @Test
    void anUntrustedUpstreamCertificateIsAnErrorWithTheReason() throws Exception {
        TestPki pki = TestPki.create(dir, "bolt");
        TestPki stranger = TestPki.create(dir, "stranger");
        Path ks = pki.leaf("bolt-server", "127.0.0.1").pkcs12("changeit");
        AtomicInteger calls = new AtomicInteger();
        RpcServer server = tlsServer(ks, "changeit", calls);
        try (Gateway g = GatewayFixture.start(config(server.port(),
                UpstreamTlsConfig.builder().caFile(stranger.caFile().toString()).build()));
             RawBolt raw = new RawBolt(g.port("bolt"))) {
            raw.write(RawBolt.stringRequest(BoltFraming.V1, 7, "java.lang.String", Map.of(), "hello"));
            RawBolt.Response r = raw.read();
            assertThat(r.id()).isEqualTo(7);
            assertThat(r.status()).isEqualTo(BoltStatus.ERROR_COMM);
            assertThat(r.text()).contains("TLS handshake with upstream 127.0.0.1:" + server.port(),
                    "certificate not signed by a trusted CA");
            assertThat(calls).hasValue(0);
            await().atMost(Duration.ofSeconds(10)).until(() -> g.cluster("up").hosts().get(0).health() == HealthStatus.UNHEALTHY);
            Counter failed = g.meterRegistry().find("sluice.upstream.tls.handshakes")
                    .tags("cluster", "up", "result", "failure", "reason", "unknown_ca").counter();
            assertThat(failed.count()).isGreaterThanOrEqualTo(1); // the request's connection, and the probes
        } finally {
            server.shutdown();
        }
    }

    @Test
    void aTlsClusterNeverFallsBackToCleartextWhenItsContextIsMissing() {
        ClusterConfig c = config(1, UpstreamTlsConfig.defaults()).clusters().get(0);
        io.sluice.server.tls.upstream.UpstreamTlsContexts contexts = new io.sluice.server.tls.upstream.UpstreamTlsContexts(null);
        assertThat(contexts.lookup(c)).isNull();
        contexts.apply(List.of(c));
        assertThat(contexts.lookup(c)).isNotNull();
        // a changed block is not served by the old context
        assertThat(contexts.lookup(c.withTls(UpstreamTlsConfig.builder().sni("x.internal").build()))).isNull();
    }
}
