package io.sluice.server;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an application that depends on {@code io.sluice:gateway-server} gets: core, codec, lb,
 * server and their real dependencies (Netty, Jackson, Micrometer, slf4j-api), never a logging
 * binding nor the demo's bolt library and what it drags in. Reads the dependency tree the build
 * writes ({@code dependency:tree} in generate-test-resources) and keeps every node not reached
 * through an optional, test or provided dependency: what Maven gives a consumer.
 */
class ThinArtifactTest {

    private static final Path TREE = Path.of("target", "dependency-tree.txt");
    /** {@code +- group:artifact:type[:classifier]:version:scope[ (optional)]} after the indentation. */
    private static final Pattern NODE = Pattern.compile("^([| ]*)[+\\\\]- (\\S+)(.*)$");

    /** groupId:artifactId of what an embedder gets, from the tree text. */
    static List<String> embedderClasspath(List<String> tree) {
        List<String> out = new ArrayList<>();
        int skipBelow = Integer.MAX_VALUE; // depth of an optional/test node whose subtree is not inherited
        for (String line : tree) {
            Matcher m = NODE.matcher(line);
            if (!m.matches()) {
                continue; // the root line
            }
            int depth = m.group(1).length() / 3;
            if (depth > skipBelow) {
                continue;
            }
            skipBelow = Integer.MAX_VALUE;
            String[] gav = m.group(2).split(":");
            String scope = gav[gav.length - 1];
            boolean optional = m.group(3).contains("(optional)");
            if (optional || scope.equals("test") || scope.equals("provided") || scope.equals("system")) {
                skipBelow = depth;
                continue;
            }
            out.add(gav[0] + ":" + gav[1]);
        }
        return out;
    }

    private static List<String> tree() throws IOException {
        assertThat(TREE).as("the build writes it (mvn ... generate-test-resources); run the test through Maven").exists();
        return Files.readAllLines(TREE);
    }

    @Test
    void embeddersGetNoLoggingBindingAndNoDemoDependencies() throws IOException {
        List<String> cp = embedderClasspath(tree());
        assertThat(cp).contains("io.sluice:gateway-core", "io.sluice:gateway-codec", "io.sluice:gateway-lb",
                "io.netty:netty-handler", "io.netty:netty-codec-http", "com.fasterxml.jackson.core:jackson-databind",
                "io.micrometer:micrometer-registry-prometheus", "org.slf4j:slf4j-api");
        assertThat(cp).noneMatch(a -> a.startsWith("com.alipay."))          // bolt, hessian, sofa-common-tools
                .noneMatch(a -> a.startsWith("com.google."))                   // guava (through bolt)
                .noneMatch(a -> a.startsWith("org.slf4j:") && !a.equals("org.slf4j:slf4j-api"))
                .noneMatch(a -> a.startsWith("ch.qos.logback:") || a.startsWith("org.apache.logging.log4j:"));
        TreeSet<String> groups = new TreeSet<>();
        cp.forEach(a -> groups.add(a.substring(0, a.indexOf(':'))));
        assertThat(groups).as("groups an embedder gets").isSubsetOf("io.sluice", "io.netty", "com.fasterxml.jackson.core",
                "io.micrometer", "io.prometheus", "org.hdrhistogram", "org.latencyutils", "org.jspecify", "org.slf4j");
    }

    @Test
    void theTreeReaderSkipsOptionalAndTestSubtrees() {
        List<String> tree = List.of(
                "io.sluice:gateway-server:jar:0.1.0-SNAPSHOT",
                "+- io.netty:netty-handler:jar:4.2.18.Final:compile",
                "|  \\- io.netty:netty-common:jar:4.2.18.Final:compile",
                "+- com.alipay.sofa:bolt:jar:1.6.12:compile (optional)",
                "|  \\- com.google.guava:guava:jar:27.0-jre:compile",
                "+- org.slf4j:slf4j-simple:jar:2.0.17:runtime (optional)",
                "+- io.netty:netty-transport-native-epoll:jar:linux-x86_64:4.2.18.Final:runtime",
                "\\- org.assertj:assertj-core:jar:3.27.7:test",
                "   \\- net.bytebuddy:byte-buddy:jar:1.18.3:test");
        assertThat(embedderClasspath(tree)).containsExactly("io.netty:netty-handler", "io.netty:netty-common",
                "io.netty:netty-transport-native-epoll");
    }
}
