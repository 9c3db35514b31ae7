package io.sluice.codec.testing;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * House rules for the tests of every module, read from their sources (the build runs this from
 * gateway-codec; the other modules are its siblings). Each rule names the file and line that breaks it.
 */
class TestSourcesTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final String TESTING = "io/sluice/codec/testing/".replace('/', java.io.File.separatorChar);

    /** Allocations Netty's leak detector never sees (unpooled heap), or that the per-test check cannot see. */
    private static final Pattern UNTRACKED_ALLOCATION = Pattern.compile(
            "\\bUnpooled\\.(?!EMPTY_BUFFER\\b)\\w+|\\bUnpooledByteBufAllocator\\b|\\b(?:Pooled)?ByteBufAllocator\\.DEFAULT\\b(?!\\.metric\\(\\))");
    /** From a request builder to its build(): the statement must set a timeout. */
    private static final Pattern HTTP_REQUEST = Pattern.compile("HttpRequest\\.newBuilder\\((?:(?!\\.build\\(\\)).)*\\.build\\(\\)",
            Pattern.DOTALL);

    @Test
    void testsAllocateBuffersThroughBufs() {
        List<String> bad = new ArrayList<>();
        for (Path f : testSources()) {
            if (f.toString().contains(TESTING)) {
                continue; // the leak checks themselves use the stock allocators on purpose
            }
            List<String> lines = lines(f);
            for (int i = 0; i < lines.size(); i++) {
                Matcher m = UNTRACKED_ALLOCATION.matcher(lines.get(i));
                if (m.find() && !lines.get(i).trim().startsWith("import ")) {
                    bad.add(ROOT.relativize(f) + ":" + (i + 1) + ": " + m.group());
                }
            }
        }
        assertThat(bad).as("use io.sluice.codec.testing.Bufs (Bufs.copied/heap/direct/ALLOC): Netty never "
                + "leak-tracks unpooled heap buffers, and Bufs checks every buffer it made is released by the end of the test").isEmpty();
    }

    @Test
    void everyHttpRequestOfATestHasATimeout() {
        List<String> bad = new ArrayList<>();
        for (Path f : testSources()) {
            String text = read(f);
            Matcher m = HTTP_REQUEST.matcher(text);
            while (m.find()) {
                if (!m.group().contains(".timeout(")) {
                    bad.add(ROOT.relativize(f) + ":" + lineOf(text, m.start()));
                }
            }
        }
        assertThat(bad).as("HttpRequest.newBuilder(..) without .timeout(..): the JDK client waits forever by default").isEmpty();
    }

    @Test
    void everyForkedGatewayStartsThroughGatewayProcess() {
        List<String> bad = new ArrayList<>();
        for (Path f : testSources()) {
            if (f.endsWith("GatewayProcess.java")) {
                continue; // adds -Dio.netty.leakDetection.level=PARANOID and fails on LEAK: in the output
            }
            List<String> lines = lines(f);
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).contains("\"-jar\"")) {
                    bad.add(ROOT.relativize(f) + ":" + (i + 1));
                }
            }
        }
        assertThat(bad).as("start the gateway jar with io.sluice.server.testing.GatewayProcess").isEmpty();
    }

    @Test
    void everyModuleHasTheSameJunitPlatformProperties() {
        String codec = read(ROOT.resolve("gateway-codec/src/test/resources/junit-platform.properties"));
        assertThat(codec).contains("junit.jupiter.execution.timeout.default", "junit.jupiter.extensions.autodetection.enabled=true");
        for (Path module : modules()) {
            Path p = module.resolve("src/test/resources/junit-platform.properties");
            assertThat(p).as(module.getFileName() + " has junit-platform.properties").exists();
            assertThat(read(p)).as(ROOT.relativize(p).toString()).isEqualTo(codec);
        }
    }

    private static List<Path> modules() {
        try (Stream<Path> s = Files.list(ROOT)) {
            List<Path> modules = s.filter(d -> Files.isDirectory(d.resolve("src/test/java"))).sorted().toList();
            assertThat(modules).as("modules under " + ROOT).hasSizeGreaterThanOrEqualTo(5);
            return modules;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<Path> testSources() {
        List<Path> files = new ArrayList<>();
        for (Path module : modules()) {
            try (Stream<Path> s = Files.walk(module.resolve("src/test/java"))) {
                s.filter(p -> p.toString().endsWith(".java")).sorted().forEach(files::add);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return files;
    }

    private static int lineOf(String text, int offset) {
        int line = 1;
        for (int i = 0; i < offset; i++) {
            if (text.charAt(i) == '\n') {
                line++;
            }
        }
        return line;
    }

    private static List<String> lines(Path f) {
        return read(f).lines().toList();
    }

    private static String read(Path f) {
        try {
            return Files.readString(f);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
