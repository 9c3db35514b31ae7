package io.sluice.server.accesslog;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.core.config.AccessLogConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** A request with a verified TLS client certificate carries it in the access log; others do not change. */
class AccessLogClientCertTest {

    @TempDir
    Path dir;

    String line(String format, String clientCert) throws Exception {
        return line(format, clientCert, null, 1);
    }

    String line(String format, String clientCert, String traceId, int attempts) throws Exception {
        Path file = dir.resolve(format + ".log");
        AccessLog log = AccessLog.open(new AccessLogConfig(true, file.toString(), format, 16), new SimpleMeterRegistry());
        StringBuilder sb = new StringBuilder();
        log.format(new AccessLog.Entry(0, "web", "http", "10.0.0.1", "GET /", 200, "proxied", "127.0.0.1:80", 5, 7, attempts,
                clientCert, traceId), sb);
        log.close();
        Files.deleteIfExists(file);
        return sb.toString();
    }

    @Test
    void jsonAndTextCarryTheClientCertificateOnlyWhenThereIsOne() throws Exception {
        String id = "Hash=ab;Subject=\"CN=a\";DNS=a.test";
        assertThat(line("json", id)).endsWith(",\"duration_us\":7,\"attempts\":1,\"client_cert\":\"Hash=ab;Subject=\\\"CN=a\\\";DNS=a.test\",\"trace_id\":null}\n");
        assertThat(line("json", null)).endsWith(",\"duration_us\":7,\"attempts\":1,\"trace_id\":null}\n");
        assertThat(line("text", id)).endsWith(" 7us - cert=\"Hash=ab;Subject='CN=a';DNS=a.test\"\n");
        assertThat(line("text", null)).endsWith(" 7us -\n");
    }

    @Test
    void theTraceIdSitsAfterTheDurationNextToAttemptsAndTheCertificate() throws Exception {
        String id = "Hash=ab;Subject=\"CN=a\";DNS=a.test";
        assertThat(line("text", id, "4bf92f3577b34da6a3ce929d0e0e4736", 3))
                .endsWith(" 7us 4bf92f3577b34da6a3ce929d0e0e4736 attempts=3 cert=\"Hash=ab;Subject='CN=a';DNS=a.test\"\n");
        assertThat(line("json", id, "4bf92f3577b34da6a3ce929d0e0e4736", 3)).endsWith(",\"attempts\":3,\"client_cert\":"
                + "\"Hash=ab;Subject=\\\"CN=a\\\";DNS=a.test\",\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\"}\n");
    }
}
