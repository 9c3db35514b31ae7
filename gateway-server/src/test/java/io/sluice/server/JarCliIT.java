package io.sluice.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The shaded jar's command line: exit codes and the messages of failures a user meets first. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JarCliIT {

    private static final Path JAR = Path.of("target", "sluice.jar");

    private record Run(int exit, String output) {
    }

    private static Run run(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-jar", JAR.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        // read on another thread: a jar that keeps running (a regression) must fail the test, not hang it
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> {
            try {
                return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "(output unreadable: " + e + ")";
            }
        });
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("still running after 60 s: " + cmd + "\n" + out.get(10, TimeUnit.SECONDS));
            }
            return new Run(p.exitValue(), out.get(10, TimeUnit.SECONDS));
        } finally {
            p.destroyForcibly();
        }
    }

    private static Path config(Path dir, int port, int adminPort) throws IOException {
        Path file = dir.resolve("sluice.json");
        Files.writeString(file, """
                {"listeners": [{"name": "web", "port": %d, "routes": [{"cluster": "api"}]}],
                 "clusters": [{"name": "api", "hosts": ["127.0.0.1:9"]}],
                 "admin": {"port": %d}}
                """.formatted(port, adminPort));
        return file;
    }

    @Test
    void aListenerPortInUseNamesTheAddressAndExitsOne(@TempDir Path dir) throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Run r = run("-c", config(dir, taken.getLocalPort(), 0).toString());
            assertThat(r.exit()).as(r.output()).isEqualTo(1);
            assertThat(r.output()).contains("sluice: failed to start: cannot listen on 127.0.0.1:" + taken.getLocalPort()
                    + " (listener web): Address already in use").doesNotContain("sluice stopped");
        }
    }

    @Test
    void anAdminPortInUseNamesTheAddressAndExitsOne(@TempDir Path dir) throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Run r = run("-c", config(dir, 0, taken.getLocalPort()).toString());
            assertThat(r.exit()).as(r.output()).isEqualTo(1);
            assertThat(r.output()).contains("cannot listen on 127.0.0.1:" + taken.getLocalPort() + " (admin): Address already in use")
                    .doesNotContain("null");
        }
    }

    @Test
    void versionPrintsTheProjectVersion() throws Exception {
        Run r = run("--version");
        assertThat(r.exit()).isZero();
        assertThat(r.output().strip()).matches("sluice \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
    }

    @Test
    void portFlagsWithAConfigFileAreAnError(@TempDir Path dir) throws Exception {
        Run r = run("-c", config(dir, 0, 0).toString(), "--http-port", "0");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.output()).contains("sluice: --http-port set ports of the embedded default config; with -c the file sets its ports");
        Run check = run("--check", "-c", config(dir, 0, 0).toString(), "--admin-port", "0", "--bolt-port", "0");
        assertThat(check.exit()).isEqualTo(2);
        assertThat(check.output()).contains("--admin-port, --bolt-port set ports");
    }
}
