package io.sluice.server.testing;

import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/** Builds small gateways on free loopback ports for integration tests. */
public final class GatewayFixture {

    private GatewayFixture() {
    }

    public static HostConfig host(TestBackend b, int weight) {
        return new HostConfig("127.0.0.1", b.port(), weight);
    }

    /** One HTTP listener "web" on a free port, every request to cluster "c" of the given backends. */
    public static GatewayConfig simple(List<HostConfig> hosts, HttpOptions options) {
        ClusterConfig c = ClusterConfig.of("c", hosts);
        ListenerConfig l = ListenerConfig.builder().name("web").routes(RouteConfig.to("c")).http(options).build();
        return GatewayConfig.builder().listeners(l).clusters(c).admin(AdminConfig.disabled())
                .transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                .drainTimeout(Duration.ofSeconds(5)).build();
    }

    public static GatewayConfig simple(TestBackend... backends) {
        List<HostConfig> hosts = new ArrayList<>();
        for (TestBackend b : backends) {
            hosts.add(host(b, 1));
        }
        return simple(hosts, HttpOptions.defaults());
    }

    public static Gateway start(GatewayConfig config) {
        return Gateway.builder().config(config).random(new SplittableRandom(7))
                .build().start().orTimeout(30, TimeUnit.SECONDS).join();
    }

    public static URI uri(Gateway gw, String path) {
        return URI.create("http://127.0.0.1:" + gw.port("web") + path);
    }
}
