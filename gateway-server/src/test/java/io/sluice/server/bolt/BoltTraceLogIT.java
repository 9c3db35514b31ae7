package io.sluice.server.bolt;

import io.sluice.codec.bolt.BoltFraming;
import io.sluice.codec.bolt.BoltStatus;
import io.sluice.server.Gateway;
import io.sluice.server.config.ConfigLoader;
import io.sluice.server.demo.DemoBoltBackend;
import io.sluice.server.testing.GatewayFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** SOFATracer's sofaTraceId/sofaRpcId from a Bolt request's headers in its access-log line (through a real bolt RpcServer). */
@Timeout(30)
class BoltTraceLogIT {

    @Test
    void sofaTraceIdIsInTheAccessLog(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("bolt.log");
        DemoBoltBackend backend = DemoBoltBackend.start("127.0.0.1", 0);
        String json = """
                {"listeners": [{"name": "rpc", "protocol": "bolt", "port": 0, "bolt": {"default_cluster": "b"}}],
                 "clusters": [{"name": "b", "protocol": "bolt", "hosts": ["127.0.0.1:%d"]}],
                 "admin": {"enabled": false},
                 "access_log": {"path": "%s", "format": "text"}}""".formatted(backend.port(),
                file.toString().replace("\\", "\\\\"));
        try (Gateway g = GatewayFixture.start(ConfigLoader.parse(json, "t.json").config());
             RawBolt raw = new RawBolt(g.port("rpc"))) {
            raw.write(RawBolt.stringRequest(BoltFraming.V1, 1, "java.lang.String",
                    Map.of("rpc_trace_context.sofaTraceId", "0a0fe8bd1575619563574100154203", "rpc_trace_context.sofaRpcId", "0.1"),
                    "traced"));
            raw.write(RawBolt.stringRequest(BoltFraming.V1, 2, "java.lang.String", Map.of("sofaTraceId", "bare-id"), "bare"));
            raw.write(RawBolt.stringRequest(BoltFraming.V1, 3, "java.lang.String", Map.of(), "untraced"));
            for (int i = 0; i < 3; i++) {
                assertThat(raw.read().status()).isEqualTo(BoltStatus.SUCCESS);
            }
        } finally {
            backend.close();
        }
        List<String> lines = Files.readAllLines(file);
        assertThat(lines).hasSize(3);
        assertThat(lines).anyMatch(l -> l.endsWith("us 0a0fe8bd1575619563574100154203/0.1"))
                .anyMatch(l -> l.endsWith("us bare-id")).anyMatch(l -> l.endsWith("us -"));
    }
}
