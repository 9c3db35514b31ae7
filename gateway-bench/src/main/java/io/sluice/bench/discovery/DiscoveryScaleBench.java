package io.sluice.bench.discovery;

import io.netty.channel.DefaultEventLoop;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.Gateway;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;

import java.lang.management.ManagementFactory;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * discovery (issue #19 performance items): a real in-process ZooKeeper holding {@code services × providers}
 * SOFARPC provider nodes, and a gateway with one ZooKeeper-discovery cluster per service.
 * Prints: heap per discovered host (used heap after GC, before/after the gateway synced), threads, time to full
 * sync; then a watch storm (200 providers re-register in one ZooKeeper multi) while an event loop picks from the
 * affected clusters every millisecond — max / p99 of the loop's lag and of a batch of picks, before and during.
 *
 * <pre>./mvnw -B -q -o -pl gateway-bench -am package -DskipTests
 * java -Xmx2g -cp gateway-bench/target/gateway-bench-*.jar io.sluice.bench.discovery.DiscoveryScaleBench 1000 10 200</pre>
 * Not a test (not in any suite); bounded: it exits after the storm (or fails after 120 s of waiting).
 */
public final class DiscoveryScaleBench {

    private DiscoveryScaleBench() {
    }

    static String url(String iface, String host, int port, long startTime) {
        return "bolt://" + host + ":" + port + "?version=1.0&accepts=100000&appName=bench&weight=100&language=java&pid=4242"
                + "&interface=" + iface + "&timeout=0&serialization=hessian2&protocol=bolt&delay=-1&warmupWeight=10"
                + "&dynamic=true&startTime=" + startTime + "&warmupTime=60000&id=rpc-cfg-0&uniqueId=&rpcVer=51302";
    }

    static String path(String iface, String url) {
        return "/sofa-rpc/" + iface + "/providers/" + URLEncoder.encode(url, StandardCharsets.UTF_8);
    }

    static long usedAfterGc() throws InterruptedException {
        long best = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(200);
            best = Math.min(best, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return best;
    }

    static int threads() {
        return ManagementFactory.getThreadMXBean().getThreadCount();
    }

    public static void main(String[] args) throws Exception {
        int services = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int providers = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int storm = args.length > 2 ? Integer.parseInt(args[2]) : 200;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        try (TestingServer zk = new TestingServer(true);
             CuratorFramework reg = CuratorFrameworkFactory.builder().connectString(zk.getConnectString())
                     .sessionTimeoutMs(60_000).retryPolicy(new RetryOneTime(100)).build()) {
            reg.start();
            reg.blockUntilConnected(10, TimeUnit.SECONDS);
            long start0 = System.currentTimeMillis() - 3_600_000;
            long t = System.nanoTime();
            String[][] paths = new String[services][providers];
            for (int s = 0; s < services; s++) {
                String iface = "com.example.bench.Service" + s;
                for (int p = 0; p < providers; p++) {
                    String u = url(iface, "10.1." + (s / 250) + "." + (s % 250 + 1), 12200 + p, start0);
                    paths[s][p] = reg.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL)
                            .forPath(path(iface, u), new byte[] {1});
                }
            }
            System.out.printf("registry: %d services x %d providers = %d nodes written in %d ms%n", services, providers,
                    services * providers, (System.nanoTime() - t) / 1_000_000);

            List<ClusterConfig> clusters = new ArrayList<>();
            for (int s = 0; s < services; s++) {
                clusters.add(ClusterConfig.builder().name("s" + s)
                        .discovery(DiscoveryConfig.zookeeper(zk.getConnectString(), "com.example.bench.Service" + s + ":1.0"))
                        .build());
            }
            GatewayConfig config = GatewayConfig.builder()
                    .listeners(ListenerConfig.builder().name("web").port(0).routes(RouteConfig.to("s0")).build())
                    .clusters(clusters).build();
            long heapBefore = usedAfterGc();
            int threadsBefore = threads();
            long t0 = System.nanoTime();
            Gateway gw = Gateway.builder().config(config).build().start().orTimeout(60, TimeUnit.SECONDS).join();
            long started = System.nanoTime();
            int total = services * providers;
            while (count(gw, services) < total) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("no full sync: " + count(gw, services) + " of " + total);
                }
                Thread.sleep(5);
            }
            long synced = System.nanoTime();
            System.out.printf("gateway: start() %d ms, full sync of %d hosts %d ms after start() was called%n",
                    (started - t0) / 1_000_000, total, (synced - t0) / 1_000_000);
            long heapAfter = usedAfterGc();
            int threadsAfter = threads();
            System.out.printf("heap used after GC: before %.1f MB, after %.1f MB: %.0f bytes per discovered host"
                            + " (%.0f per cluster with its source, meters and hosts)%n", heapBefore / 1e6, heapAfter / 1e6,
                    (heapAfter - heapBefore) / (double) total, (heapAfter - heapBefore) / (double) services);
            System.out.printf("threads: %d before, %d after (%d ZooKeeper sessions)%n", threadsBefore, threadsAfter,
                    (int) gw.meterRegistry().get("sluice.discovery.zookeeper.sessions").gauge().value());
            System.out.printf("meters: %d%n", gw.meterRegistry().getMeters().size());

            // ---- watch storm: `storm` providers (whole services) re-register at once, one ZooKeeper multi
            int stormServices = Math.max(1, storm / providers);
            ClusterBalancer[] hot = new ClusterBalancer[stormServices];
            for (int s = 0; s < stormServices; s++) {
                hot[s] = gw.cluster("s" + s);
            }
            DefaultEventLoop loop = new DefaultEventLoop();
            long[] lag = new long[200_000];
            long[] pickBatch = new long[200_000];
            int[] n = {0};
            long period = 1_000_000;
            long first = System.nanoTime() + period;
            long[] expected = {first};
            ScheduledFuture<?> probe = loop.scheduleAtFixedRate(() -> {
                long now = System.nanoTime();
                long l = now - expected[0];
                expected[0] += period;
                long a = System.nanoTime();
                for (ClusterBalancer b : hot) {
                    for (int k = 0; k < 10; k++) {
                        Host h = b.pick();
                        if (h == null) {
                            throw new IllegalStateException("no host picked in " + b.name());
                        }
                    }
                }
                long d = System.nanoTime() - a;
                if (n[0] < lag.length) {
                    lag[n[0]] = l;
                    pickBatch[n[0]] = d;
                    n[0]++;
                }
            }, Math.max(0, first - System.nanoTime()), period, TimeUnit.NANOSECONDS);
            Thread.sleep(3000);
            int baseEnd = loop.submit(() -> n[0]).get();
            long stormMillis = System.currentTimeMillis();
            List<CuratorOp> ops = new ArrayList<>();
            for (int s = 0; s < stormServices; s++) {
                String iface = "com.example.bench.Service" + s;
                for (int p = 0; p < providers; p++) {
                    ops.add(reg.transactionOp().delete().forPath(paths[s][p]));
                    String u = url(iface, "10.1." + (s / 250) + "." + (s % 250 + 1), 12200 + p, stormMillis);
                    ops.add(reg.transactionOp().create().withMode(CreateMode.EPHEMERAL).forPath(path(iface, u), new byte[] {1}));
                }
            }
            long ts = System.nanoTime();
            reg.transaction().forOperations(ops);
            while (!restarted(hot, stormMillis)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("storm not applied");
                }
                Thread.sleep(1);
            }
            long applied = System.nanoTime();
            Thread.sleep(1000);
            int stormEnd = loop.submit(() -> n[0]).get();
            probe.cancel(false);
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            System.out.printf("watch storm: %d providers of %d services re-registered in one multi (%d ops); all applied"
                    + " (new startTime, warming) %d ms after the multi returned%n", stormServices * providers, stormServices,
                    ops.size(), (applied - ts) / 1_000_000);
            System.out.printf("  event-loop probe every 1 ms, %d picks per tick over the %d storm clusters:%n",
                    stormServices * 10, stormServices);
            report("  before (3 s)", lag, pickBatch, 0, baseEnd);
            report("  storm (+1 s)", lag, pickBatch, baseEnd, stormEnd);
            gw.close();
        }
    }

    static int count(Gateway gw, int services) {
        int c = 0;
        for (int s = 0; s < services; s++) {
            ClusterBalancer b = gw.cluster("s" + s);
            c += b == null ? 0 : b.hosts().size();
        }
        return c;
    }

    static boolean restarted(ClusterBalancer[] hot, long startMillis) {
        for (ClusterBalancer b : hot) {
            for (Host h : b.hosts()) {
                if (h.startMillis() != startMillis) {
                    return false;
                }
            }
        }
        return true;
    }

    static void report(String label, long[] lag, long[] picks, int from, int to) {
        long[] l = Arrays.copyOfRange(lag, from, to);
        long[] p = Arrays.copyOfRange(picks, from, to);
        Arrays.sort(l);
        Arrays.sort(p);
        System.out.printf("%s: %d ticks; loop lag p50 %d us, p99 %d us, max %d us; pick batch p50 %d us, p99 %d us,"
                        + " max %d us%n", label, l.length, l[l.length / 2] / 1000, l[(int) (l.length * 0.99)] / 1000,
                l[l.length - 1] / 1000, p[p.length / 2] / 1000, p[(int) (p.length * 0.99)] / 1000, p[p.length - 1] / 1000);
    }
}
