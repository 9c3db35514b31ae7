package io.sluice.server;

import io.sluice.server.tls.TestPki;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** A listener whose key does not open or match: the CLI exits 2 naming the file and the JSON path. */
class TlsStartupTest {

    @TempDir
    Path dir;

    int run(Path config, ByteArrayOutputStream err) {
        return Main.run(new String[]{"-c", config.toString()}, new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    Path config(String cert) throws Exception {
        Path c = dir.resolve("sluice.json");
        Files.writeString(c, """
                {"clusters": [{"name": "c", "hosts": [{"address": "127.0.0.1:9"}]}],
                 "listeners": [{"name": "web", "port": 0, "routes": [{"cluster": "c"}],
                   "tls": {"certificates": [%s]}}]}""".formatted(cert));
        return c;
    }

    @Test
    void aWrongPasswordOrAMismatchedKeyExits2NamingTheFileAndThePath() throws Exception {
        TestPki pki = TestPki.ca(dir, "start");
        TestPki.Leaf a = pki.leaf("a", "a.test", 5);
        TestPki.Leaf b = pki.leaf("b", "b.test", 5);
        Path p12 = a.pkcs12("right");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertThat(run(config("{\"pkcs12\": \"" + p12 + "\", \"password\": \"wrong\"}"), err)).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("$.listeners[0].tls.certificates[0].password")
                .contains(p12.toString());
        err.reset();
        assertThat(run(config("{\"cert_chain\": \"" + a.chain() + "\", \"private_key\": \"" + b.key() + "\"}"), err)).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("$.listeners[0].tls.certificates[0].private_key")
                .contains(b.key().toString());
    }
}
