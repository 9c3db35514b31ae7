package io.sluice.server.traffic;

import com.alipay.remoting.BizContext;
import com.alipay.remoting.rpc.RpcClient;
import com.alipay.remoting.rpc.RpcServer;
import com.alipay.remoting.rpc.protocol.SyncUserProcessor;
import io.sluice.core.config.GatewayConfig;
import io.sluice.server.Gateway;
import io.sluice.server.config.ConfigLoader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** A weighted Bolt route between two real bolt RpcServers, driven by the real RpcClient, across a reload. */
class BoltWeightedIT {

    private RpcServer stable;
    private RpcServer canary;
    private RpcClient client;
    private Gateway gw;

    @AfterEach
    void stop() {
        for (AutoCloseable c : new AutoCloseable[] {client == null ? null : client::shutdown, gw,
                stable == null ? null : stable::shutdown, canary == null ? null : canary::shutdown}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                // best effort
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

    private GatewayConfig config(int stableWeight, int canaryWeight) {
        String json = """
                {
                  "listeners": [{"name": "rpc", "protocol": "bolt", "port": 0, "routes": [
                    {"weighted_clusters": {"clusters": [{"name": "stable", "weight": %d}, {"name": "canary", "weight": %d}]}}
                  ]}],
                  "clusters": [
                    {"name": "stable", "protocol": "bolt", "hosts": ["127.0.0.1:%d"]},
                    {"name": "canary", "protocol": "bolt", "hosts": ["127.0.0.1:%d"]}
                  ],
                  "admin": {"enabled": false}, "drain_timeout": "200ms",
                  "transport": {"worker_threads": 2}
                }
                """.formatted(stableWeight, canaryWeight, stable.port(), canary.port());
        return ConfigLoader.parse(json, "test").config();
    }

    private Map<Object, Integer> calls(int n) throws Exception {
        Map<Object, Integer> out = new HashMap<>();
        String addr = "127.0.0.1:" + gw.port("rpc");
        for (int i = 0; i < n; i++) {
            out.merge(client.invokeSync(addr, "hi", 5000), 1, Integer::sum);
        }
        return out;
    }

    @Test
    void aWeightedBoltRouteSplitsExactlyAndFollowsAReload() throws Exception {
        stable = server("stable");
        canary = server("canary");
        gw = Gateway.builder().config(config(90, 10)).random(new SplittableRandom(7)).build().start()
                .orTimeout(30, TimeUnit.SECONDS).join();
        client = new RpcClient();
        client.startup();
        assertThat(calls(1000)).containsEntry("stable", 900).containsEntry("canary", 100);
        gw.reload(config(50, 50));
        assertThat(calls(100)).containsEntry("stable", 50).containsEntry("canary", 50);
    }
}
