package io.sluice.server.bolt;

import com.alipay.remoting.BizContext;
import com.alipay.remoting.rpc.RpcServer;
import com.alipay.remoting.rpc.protocol.SyncUserProcessor;
import io.sluice.codec.bolt.BoltFraming;
import io.sluice.codec.bolt.BoltStatus;
import io.sluice.core.config.GatewayConfig;
import io.sluice.server.Gateway;
import io.sluice.server.config.ConfigLoader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hash balancing on Bolt: a {@code maglev} cluster of three real bolt RpcServers keyed by a
 * header-map entry ({@code hash_policy: [{"header": "uid"}]}); requests are raw Bolt frames
 * carrying that header. One uid always reaches one server; a uid whose server goes away moves,
 * the others stay.
 */
class BoltHashIT {

    private final RpcServer[] servers = new RpcServer[3];
    private Gateway gw;

    @AfterEach
    void stop() {
        if (gw != null) {
            gw.close();
        }
        for (RpcServer s : servers) {
            if (s != null) {
                s.shutdown();
            }
        }
    }

    private static RpcServer server(String name) {
        RpcServer s = new RpcServer("127.0.0.1", 0, true);
        s.registerUserProcessor(new SyncUserProcessor<String>() {
            @Override
            public Object handleRequest(BizContext ctx, String req) {
                return name;
            }

            @Override
            public String interest() {
                return String.class.getName();
            }
        });
        s.startup();
        return s;
    }

    private GatewayConfig config(int hostCount) {
        StringBuilder hosts = new StringBuilder();
        for (int i = 0; i < hostCount; i++) {
            hosts.append(i == 0 ? "" : ", ").append("\"127.0.0.1:").append(servers[i].port()).append('"');
        }
        String json = """
                {
                  "listeners": [{"name": "rpc", "protocol": "bolt", "port": 0, "routes": [
                    {"cluster": "pool", "hash_policy": [{"header": "uid"}]}
                  ]}],
                  "clusters": [{"name": "pool", "protocol": "bolt", "lb": "maglev", "hosts": [%s]}],
                  "admin": {"enabled": false}, "drain_timeout": "200ms", "transport": {"worker_threads": 2}
                }
                """.formatted(hosts);
        return ConfigLoader.parse(json, "test").config();
    }

    /** uid → the server that answered, three requests each (all must agree). */
    private Map<String, String> ask(int users) throws Exception {
        Map<String, String> out = new HashMap<>();
        try (RawBolt raw = new RawBolt(gw.port("rpc"))) {
            int id = 0;
            for (int u = 0; u < users; u++) {
                for (int k = 0; k < 3; k++) {
                    raw.write(RawBolt.stringRequest(BoltFraming.V1, ++id, "java.lang.String", Map.of("uid", "user-" + u), "hi"));
                    RawBolt.Response r = raw.read();
                    assertThat(r.status()).isEqualTo(BoltStatus.SUCCESS);
                    String who = r.text().substring(r.text().indexOf('s'));
                    String before = out.putIfAbsent("user-" + u, who);
                    assertThat(before == null ? who : before).as("user-%d", u).isEqualTo(who);
                }
            }
        }
        return out;
    }

    @Test
    void aUidStaysOnOneServerAndOnlyTheKeysOfARemovedServerMove() throws Exception {
        for (int i = 0; i < 3; i++) {
            servers[i] = server("server" + i);
        }
        gw = Gateway.builder().config(config(3)).random(new SplittableRandom(7)).build().start()
                .orTimeout(30, TimeUnit.SECONDS).join();
        Map<String, String> three = ask(30);
        assertThat(new HashSet<>(three.values())).hasSize(3);
        gw.reload(config(2)); // server2 leaves the cluster
        Map<String, String> two = ask(30);
        for (Map.Entry<String, String> e : three.entrySet()) {
            if (!e.getValue().equals("server2")) {
                assertThat(two.get(e.getKey())).as(e.getKey()).isEqualTo(e.getValue());
            } else {
                assertThat(two.get(e.getKey())).isIn("server0", "server1");
            }
        }
    }
}
