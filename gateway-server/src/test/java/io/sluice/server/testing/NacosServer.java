package io.sluice.server.testing;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A real Nacos server (0.8.0, the newest whose server modules Maven Central carries) in its own JVM, in
 * standalone mode, on a loopback port, its data under a temporary home: the classpath comes from
 * {@code src/test/nacos/pom.xml} (resolved once with the Maven wrapper into {@code src/test/nacos/target}),
 * the main class is {@code src/test/nacos/src/com/example/NacosPeer.java}. Stop and start it again on the
 * same port to simulate an outage. Instances are registered through Nacos's HTTP open API, as any
 * non-Java client (or {@code curl}) would.
 */
public final class NacosServer implements AutoCloseable {

    private static final Path PEER = Path.of("src", "test", "nacos");
    /** The namespace instances are registered in: SOFARPC's default (and the gateway's). */
    public static final String NAMESPACE = "sofa-rpc";
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final String classpath;
    private final Path home;
    private final int port;
    private Process process;

    private NacosServer(String classpath, Path home, int port) {
        this.classpath = classpath;
        this.home = home;
        this.port = port;
    }

    /** Resolves the classpath (first run only), starts the server and waits until it answers (≤ 60 s). */
    public static NacosServer start() throws Exception {
        NacosServer s = new NacosServer(classpath(), Files.createTempDirectory("nacos-home"), Ports.free());
        s.startProcess();
        return s;
    }

    private static String classpath() throws Exception {
        Path cpFile = PEER.resolve("target").resolve("nacos.classpath");
        if (!Files.exists(cpFile) || Files.getLastModifiedTime(cpFile).compareTo(Files.getLastModifiedTime(PEER.resolve("pom.xml"))) < 0) {
            Files.createDirectories(PEER.resolve("target"));
            String mvnw = Path.of("..", "mvnw").toAbsolutePath().toString();
            Process p = new ProcessBuilder(mvnw, "-B", "-q", "-f", PEER.resolve("pom.xml").toString(),
                    "dependency:build-classpath", "-Dmdep.outputFile=target/nacos.classpath")
                    .redirectErrorStream(true).redirectOutput(PEER.resolve("target").resolve("resolve.log").toFile()).start();
            if (!p.waitFor(240, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("resolving Nacos's classpath took over 240 s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException("mvnw dependency:build-classpath failed, see " + PEER.resolve("target/resolve.log"));
            }
        }
        String cp = Files.readString(cpFile).trim();
        Path classes = PEER.resolve("target").resolve("classes");
        Path source = PEER.resolve("src").resolve("com").resolve("example").resolve("NacosPeer.java");
        Path compiled = classes.resolve("com").resolve("example").resolve("NacosPeer.class");
        if (!Files.exists(compiled) || Files.getLastModifiedTime(compiled).compareTo(Files.getLastModifiedTime(source)) < 0) {
            Files.createDirectories(classes);
            JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
            int rc = javac.run(null, null, null, "-d", classes.toString(), "-cp", cp, "--release", "17", source.toString());
            if (rc != 0) {
                throw new IllegalStateException("compiling " + source + " failed");
            }
        }
        return classes.toAbsolutePath() + File.pathSeparator + cp;
    }

    /** (Re)starts the server process on the same port and home; waits until it answers. */
    public synchronized void startProcess() throws Exception {
        if (process != null && process.isAlive()) {
            return;
        }
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Dnacos.standalone=true",
                "-Dnacos.home=" + home, "-Duser.home=" + home, "-Djava.io.tmpdir=" + home,
                "-cp", classpath, "com.example.NacosPeer",
                "--server.port=" + port, "--server.address=127.0.0.1", "--server.servlet.context-path=/nacos",
                "--nacos.cmdb.dumpTaskInterval=3600", "--nacos.cmdb.eventTaskInterval=10",
                "--nacos.cmdb.labelTaskInterval=300", "--nacos.cmdb.loadDataAtStart=false",
                "--spring.main.banner-mode=off"));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(home.resolve("server.out").toFile()));
        pb.environment().put("HOME", home.toString());
        process = pb.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("Nacos exited with " + process.exitValue() + ", see " + home.resolve("server.out"));
            }
            try {
                HttpResponse<String> r = get("/nacos/v1/ns/instance/list?serviceName=ping");
                if (r.statusCode() == 200 || r.statusCode() == 404) {
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("Nacos did not answer within 60 s, see " + home.resolve("server.out"));
    }

    /** Kills the server (an outage); {@link #startProcess()} brings it back on the same port. */
    public synchronized void stopProcess() throws InterruptedException {
        if (process != null) {
            process.destroyForcibly();
            process.waitFor(20, TimeUnit.SECONDS);
            process = null;
        }
    }

    /** {@code 127.0.0.1:port}. */
    public String address() {
        return "127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    /**
     * Registers (or re-registers, replacing its weight and metadata) an instance: {@code POST /nacos/v1/ns/instance}.
     *
     * @param metadata the provider parameters SOFARPC puts in the instance metadata (weight, startTime, ...)
     */
    public void register(String service, String cluster, String ip, int port, double weight, boolean enabled,
                         Map<String, String> metadata) throws Exception {
        String meta = metadata.entrySet().stream().map(e -> "\"" + e.getKey() + "\":\"" + e.getValue() + "\"")
                .collect(Collectors.joining(",", "{", "}"));
        String q = "serviceName=" + enc(service) + "&namespaceId=" + NAMESPACE + "&clusterName=" + enc(cluster) + "&ip=" + ip + "&port=" + port
                + "&weight=" + weight + "&enable=" + enabled + "&enabled=" + enabled + "&metadata=" + enc(meta);
        HttpResponse<String> r = send(HttpRequest.newBuilder(uri("/nacos/v1/ns/instance?" + q))
                .POST(HttpRequest.BodyPublishers.noBody()));
        if (r.statusCode() != 200) {
            throw new IllegalStateException("register " + ip + ":" + port + ": HTTP " + r.statusCode() + " " + r.body());
        }
    }

    /** Removes an instance: {@code DELETE /nacos/v1/ns/instance}. */
    public void deregister(String service, String cluster, String ip, int port) throws Exception {
        String q = "serviceName=" + enc(service) + "&namespaceId=" + NAMESPACE + "&clusterName=" + enc(cluster) + "&ip=" + ip + "&port=" + port;
        HttpResponse<String> r = send(HttpRequest.newBuilder(uri("/nacos/v1/ns/instance?" + q)).DELETE());
        if (r.statusCode() != 200) {
            throw new IllegalStateException("deregister " + ip + ":" + port + ": HTTP " + r.statusCode() + " " + r.body());
        }
    }

    /** The raw instance list answer (what the gateway reads). */
    public String list(String service) throws Exception {
        return get("/nacos/v1/ns/instance/list?serviceName=" + enc(service) + "&namespaceId=" + NAMESPACE + "&healthyOnly=false").body();
    }

    private HttpResponse<String> get(String pathAndQuery) throws IOException, InterruptedException {
        return send(HttpRequest.newBuilder(uri(pathAndQuery)).GET());
    }

    private HttpResponse<String> send(HttpRequest.Builder b) throws IOException, InterruptedException {
        return http.send(b.timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private URI uri(String pathAndQuery) {
        return URI.create("http://127.0.0.1:" + port + pathAndQuery);
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws Exception {
        stopProcess();
    }
}
