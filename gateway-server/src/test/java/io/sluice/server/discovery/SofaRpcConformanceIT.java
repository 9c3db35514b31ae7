package io.sluice.server.discovery;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.Ports;
import io.sluice.server.testing.ProcessOutput;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Conformance with a real SOFARPC: a sofa-rpc-all 5.13.2 provider in its own JVM (its own classpath,
 * Netty 4.1 and bolt 1.6.10, resolved from src/test/sofarpc/pom.xml on first use) registers in a real
 * ZooKeeper; the gateway discovers it (address, weight, startTime as SOFARPC writes them) and a real
 * SOFARPC consumer, also in its own JVM, calls the service through the gateway. SIGTERM of the
 * provider (SOFARPC unregisters on shutdown) takes it out of the cluster.
 */
@Timeout(300) // the first run on a fresh machine downloads SOFARPC's classpath (~100 jars)
class SofaRpcConformanceIT {

    private static final Path PEER = Path.of("src", "test", "sofarpc");
    private static final String SERVICE = "com.example.SofaEcho$EchoService";
    private final HttpClient http = HttpClient.newHttpClient();

    /** SOFARPC's classpath (resolved once with Maven into src/test/sofarpc/target) plus the compiled peer. */
    private static String peerClasspath() throws Exception {
        Path cpFile = PEER.resolve("target").resolve("sofarpc.classpath");
        if (!Files.exists(cpFile) || Files.getLastModifiedTime(cpFile).compareTo(Files.getLastModifiedTime(PEER.resolve("pom.xml"))) < 0) {
            String mvnw = Path.of("..", "mvnw").toAbsolutePath().toString();
            Process p = new ProcessBuilder(mvnw, "-B", "-q", "-f", PEER.resolve("pom.xml").toString(),
                    "dependency:build-classpath", "-Dmdep.outputFile=target/sofarpc.classpath")
                    .redirectErrorStream(true).redirectOutput(PEER.resolve("resolve.log").toFile()).start();
            assertThat(p.waitFor(240, TimeUnit.SECONDS)).as("resolving SOFARPC's classpath").isTrue();
            assertThat(p.exitValue()).as("mvnw dependency:build-classpath, see " + PEER.resolve("resolve.log")).isZero();
        }
        String cp = Files.readString(cpFile).trim();
        Path classes = PEER.resolve("target").resolve("classes");
        Path source = PEER.resolve("src").resolve("com").resolve("example").resolve("SofaEcho.java");
        Path compiled = classes.resolve("com").resolve("example").resolve("SofaEcho.class");
        if (!Files.exists(compiled) || Files.getLastModifiedTime(compiled).compareTo(Files.getLastModifiedTime(source)) < 0) {
            Files.createDirectories(classes);
            JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
            int rc = javac.run(null, null, null, "-d", classes.toString(), "-cp", cp, "--release", "17", source.toString());
            assertThat(rc).as("compiling " + source).isZero();
        }
        return classes.toAbsolutePath() + File.pathSeparator + cp;
    }

    private static Process peer(String classpath, Path home, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:TieredStopAtLevel=1", "-Duser.home=" + home, "-Dlogging.path=" + home,
                "--add-opens", "java.base/java.lang=ALL-UNNAMED", "-cp", classpath, "com.example.SofaEcho"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("HOME", home.toString());
        return pb.start();
    }

    private JsonNode cluster(Gateway gw) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + gw.adminAddress().getPort() + "/clusters"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        return new ObjectMapper().readTree(r.body()).get("clusters").get(0);
    }

    @Test
    void aRealSofaRpcProviderIsDiscoveredAndARealConsumerCallsItThroughTheGateway() throws Exception {
        String classpath = peerClasspath();
        Path home = Files.createTempDirectory("sofarpc-home");
        InstanceSpec spec = new InstanceSpec(Files.createTempDirectory("zk").toFile(), InstanceSpec.getRandomPort(), -1, -1,
                true, -1, 500, -1);
        Process provider = null;
        try (TestingServer zk = new TestingServer(spec, true)) {
            ClusterConfig c = ClusterConfig.builder().name("echo").protocol(Protocol.BOLT)
                    .discovery(DiscoveryConfig.zookeeper(zk.getConnectString(), SERVICE + ":1.0"))
                    .slowStart(new SlowStartConfig(Duration.ofSeconds(60), 1.0, 0.10)).build();
            ListenerConfig l = ListenerConfig.builder().name("bolt").protocol(Protocol.BOLT)
                    .bolt(BoltOptions.builder().defaultCluster("echo").build()).build();
            // route by registry: requests without a route go to the cluster of their service, discovered on first use
            ClusterConfig registry = ClusterConfig.builder().name("registry").protocol(Protocol.BOLT)
                    .discovery(DiscoveryConfig.zookeeper(zk.getConnectString(), "*")).build();
            ListenerConfig routed = ListenerConfig.builder().name("routed").protocol(Protocol.BOLT)
                    .bolt(BoltOptions.builder().defaultCluster("registry").build()).build();
            try (Gateway gw = GatewayFixture.start(GatewayConfig.builder().listeners(l, routed).clusters(c, registry)
                    .admin(new AdminConfig(true, "127.0.0.1", 0, true))
                    .transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                    .drainTimeout(Duration.ofSeconds(2)).build())) {
                int port = Ports.free();
                long before = System.currentTimeMillis();
                provider = peer(classpath, home, "provide", zk.getConnectString(), String.valueOf(port), "200", "60000");
                ProcessOutput out = ProcessOutput.of(provider);
                String line;
                do {
                    line = out.queue().poll(60, TimeUnit.SECONDS);
                    assertThat(line).as("provider output so far:\n" + out.all()).isNotNull();
                } while (!line.startsWith("EXPORTED"));

                // the gateway has it: SOFARPC's address, weight and startTime; warming up from that startTime
                await().atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(20))
                        .until(() -> cluster(gw).get("hosts").size() == 1);
                JsonNode h = cluster(gw).get("hosts").get(0);
                assertThat(h.get("address").asText()).isEqualTo("127.0.0.1:" + port);
                assertThat(h.get("source").asText()).isEqualTo("zookeeper");
                assertThat(h.get("weight").asInt()).isEqualTo(200);
                assertThat(h.get("start_time_ms").asLong()).isBetween(before, System.currentTimeMillis());
                assertThat(h.get("warm_up_factor").asDouble()).isLessThan(0.5);

                // a real SOFARPC consumer -> the gateway -> the provider
                Process consumer = peer(classpath, home, "call", "127.0.0.1:" + gw.port("bolt"), "3");
                ProcessOutput cout = ProcessOutput.of(consumer);
                assertThat(consumer.waitFor(60, TimeUnit.SECONDS)).as(cout.all()).isTrue();
                assertThat(consumer.exitValue()).as(cout.all()).isZero();
                assertThat(cout.all()).contains("REPLY from:" + port + ":hi0", "REPLY from:" + port + ":hi2")
                        .doesNotContain("RETRY");

                // the same consumer through the listener that routes by registry: the first call finds no
                // cluster yet (NO_PROCESSOR, retried by the client), then the service's cluster serves
                Process viaRegistry = peer(classpath, home, "call", "127.0.0.1:" + gw.port("routed"), "3");
                ProcessOutput rout = ProcessOutput.of(viaRegistry);
                assertThat(viaRegistry.waitFor(60, TimeUnit.SECONDS)).as(rout.all()).isTrue();
                assertThat(viaRegistry.exitValue()).as(rout.all()).isZero();
                assertThat(rout.all()).contains("RETRY 1", "REPLY from:" + port + ":hi0", "REPLY from:" + port + ":hi2");
                assertThat(gw.meterRegistry().find("sluice.discovery.hosts").tag("cluster", "registry/" + SERVICE).gauge())
                        .isNotNull().satisfies(g -> assertThat(g.value()).isEqualTo(1.0));
                // both clusters follow the registry over one shared ZooKeeper session
                assertThat(gw.meterRegistry().get("sluice.discovery.zookeeper.sessions").gauge().value()).isEqualTo(1.0);

                // SIGTERM: SOFARPC's shutdown hook unregisters; the host leaves the cluster
                provider.destroy();
                await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                        .until(() -> cluster(gw).get("hosts").size() == 0
                                || cluster(gw).get("discovery").get("empty_protected").asBoolean());
                assertThat(cluster(gw).get("discovery").get("empty_protected").asBoolean())
                        .as("the last provider gone: its node was deleted, the last set is kept (allow_empty false)").isTrue();
            }
        } finally {
            if (provider != null) {
                provider.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
