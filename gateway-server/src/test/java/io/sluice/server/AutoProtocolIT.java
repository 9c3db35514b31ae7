package io.sluice.server;

import com.alipay.remoting.BizContext;
import com.alipay.remoting.rpc.RpcClient;
import com.alipay.remoting.rpc.RpcServer;
import com.alipay.remoting.rpc.protocol.SyncUserProcessor;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A listener with {@code "protocol": "auto"}: the JDK HttpClient and the real bolt RpcClient on
 * the same port, each routed to a cluster of its own protocol by the same catch-all rules; a
 * client speaking neither gets HTTP's 400; a silent client is closed after the idle timeout.
 */
class AutoProtocolIT {

    private TestBackend web;
    private RpcServer rpc;
    private RpcClient client;
    private Gateway gateway;
    private int port;

    @BeforeEach
    void start() throws Exception {
        web = TestBackend.start();
        rpc = new RpcServer(0, false, false);
        rpc.registerUserProcessor(new SyncUserProcessor<String>() {
            @Override
            public Object handleRequest(BizContext ctx, String req) {
                return "echo:" + req;
            }

            @Override
            public String interest() {
                return String.class.getName();
            }
        });
        rpc.startup();
        client = new RpcClient();
        client.startup();
        HttpOptions http = HttpOptions.builder().idleTimeout(Duration.ofMillis(500)).build();
        ClusterConfig webCluster = ClusterConfig.of("web", List.of(new HostConfig("127.0.0.1", web.port(), 1)));
        ClusterConfig rpcCluster = ClusterConfig.of("rpc", List.of(new HostConfig("127.0.0.1", rpc.port(), 1)))
                .withProtocol(Protocol.BOLT);
        ListenerConfig both = ListenerConfig.builder().name("both").protocol(Protocol.AUTO)
                .routes(RouteConfig.to("rpc"), RouteConfig.to("web")).http(http)
                .bolt(BoltOptions.builder().maxFrameLength(4 << 20).idleTimeout(Duration.ofMillis(500)).build()).build();
        gateway = Gateway.builder().config(GatewayConfig.builder().listeners(both).clusters(webCluster, rpcCluster)
                        .admin(new AdminConfig(true, "127.0.0.1", 0))
                        .transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                        .drainTimeout(Duration.ofSeconds(5)).build())
                .random(new SplittableRandom(7)).build().start().orTimeout(30, TimeUnit.SECONDS).join();
        port = gateway.port("both");
    }

    @AfterEach
    void stop() {
        gateway.close();
        client.shutdown();
        rpc.shutdown();
        web.close();
    }

    private static HttpResponse<String> get(int port, String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void httpAndBoltClientsShareThePortAndEachReachesItsCluster() throws Exception {
        HttpResponse<String> r = get(port, "/hello");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("ok from " + web.port());

        assertThat(client.invokeSync("127.0.0.1:" + port, "ping", 5000)).isEqualTo("echo:ping");
        assertThat(client.invokeSync("127.0.0.1:" + port, "again", 5000)).isEqualTo("echo:again");
        assertThat(get(port, "/hello").statusCode()).isEqualTo(200);
        assertThat(web.requests()).isEqualTo(2);

        String metrics = get(gateway.adminAddress().getPort(), "/metrics").body();
        assertThat(metrics).contains("listener=\"both\",protocol=\"auto\"");
    }

    @Test
    void aClientSpeakingNeitherGetsABadRequest() throws Exception {
        try (RawClient raw = new RawClient(port)) {
            // a TLS ClientHello's first bytes: neither an HTTP method nor a Bolt protocol code
            RawClient.Response resp = raw.send("\u0016\u0003\u0001\u0000\u00a5\u0001\u0000\u0000\r\n\r\n").read();
            assertThat(resp.status()).isEqualTo(400);
        }
        assertThat(client.invokeSync("127.0.0.1:" + port, "still", 5000)).isEqualTo("echo:still");
    }

    @Test
    void aClientThatSendsNothingIsClosedAfterTheIdleTimeout() throws Exception {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            InputStream in = s.getInputStream();
            long t0 = System.nanoTime();
            assertThat(in.read()).as("the gateway closes a connection that never spoke").isEqualTo(-1);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("after the 500 ms idle timeout")
                    .isGreaterThan(Duration.ofMillis(400)).isLessThan(Duration.ofSeconds(5));
        }
        assertThat(get(port, "/x").body()).isEqualTo("ok from " + web.port());
        // the silent connection is counted as accepted and closed, like every other
        String m = get(gateway.adminAddress().getPort(), "/metrics").body();
        double accepted = sum(m, "sluice_downstream_connections_accepted_total{");
        double closed = sum(m, "sluice_downstream_connections_closed_total{");
        assertThat(accepted).isEqualTo(2.0); // the silent one and the HttpClient's
        assertThat(closed).isGreaterThanOrEqualTo(1.0).isLessThanOrEqualTo(accepted);
    }

    /** Sum of the samples of a meter on listener "both". */
    private static double sum(String metrics, String prefix) {
        return metrics.lines().filter(l -> l.startsWith(prefix) && l.contains("listener=\"both\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    @Test
    void aShutdownClosesASilentConnectionAtOnce() throws Exception {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            assertThat(client.invokeSync("127.0.0.1:" + port, "before", 5000)).isEqualTo("echo:before");
            long t0 = System.nanoTime();
            gateway.close(); // drain timeout 5 s: the silent connection must not hold it up
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(3));
            assertThat(s.getInputStream().read()).isEqualTo(-1);
        }
    }
}
