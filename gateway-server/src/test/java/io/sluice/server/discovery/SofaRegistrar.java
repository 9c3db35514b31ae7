package io.sluice.server.discovery;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Writes provider nodes exactly as SOFARPC's registry-zk does (docs/discovery.md, spec §2.2/§5.4):
 * EPHEMERAL children {@code /sofa-rpc/{interface}/providers/{URLEncoder.encode(url)}} with data
 * {@code 0x01}, parents created as containers, the URL {@code bolt://host:port?version=1.0&k=v...}
 * with every key a 5.13.2 provider writes. One Curator session per registrar (= one provider
 * process): closing it is a graceful stop, {@link #crash} lets the server expire the session.
 */
final class SofaRegistrar implements AutoCloseable {

    final CuratorFramework client;

    SofaRegistrar(String connect, int sessionMs) throws InterruptedException {
        client = CuratorFrameworkFactory.builder().connectString(connect).sessionTimeoutMs(sessionMs)
                .connectionTimeoutMs(5000).retryPolicy(new RetryOneTime(200)).build();
        client.start();
        if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("registrar could not connect to " + connect);
        }
    }

    /** The provider URL SOFARPC 5.13.2 builds (HashMap order as observed), with optional warm-up keys. */
    static String url(String iface, int port, int weight, long startTime, String uniqueId, Long warmupTime, Integer warmupWeight) {
        StringBuilder u = new StringBuilder("bolt://127.0.0.1:").append(port)
                .append("?version=1.0&accepts=100000&appName=echo-app&weight=").append(weight)
                .append("&language=java&pid=4242&interface=").append(iface)
                .append("&timeout=0&serialization=hessian2&protocol=bolt&delay=-1");
        if (warmupWeight != null) {
            u.append("&warmupWeight=").append(warmupWeight);
        }
        u.append("&dynamic=true&startTime=").append(startTime);
        if (warmupTime != null) {
            u.append("&warmupTime=").append(warmupTime);
        }
        u.append("&id=rpc-cfg-0&uniqueId=").append(uniqueId == null ? "" : uniqueId).append("&rpcVer=51302");
        return u.toString();
    }

    static String path(String iface, String url) {
        return "/sofa-rpc/" + iface + "/providers/" + URLEncoder.encode(url, StandardCharsets.UTF_8);
    }

    /** Registers {@code url} for {@code iface}; returns the node path. */
    String register(String iface, String url) throws Exception {
        return client.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath(path(iface, url), new byte[] {1});
    }

    void unregister(String path) throws Exception {
        client.delete().forPath(path);
    }

    /**
     * A provider process that can be "killed -9": a plain ZooKeeper handle (no Curator that would
     * close the session on its way out) holding one ephemeral node. {@link #crash} drops the
     * connection without closing the session, so the server deletes the node only when the session
     * times out, exactly as after kill -9 of a SOFARPC provider.
     */
    static final class Crashable {
        private final ZooKeeper zk;

        Crashable(String connect, int sessionMs) throws Exception {
            CountDownLatch connected = new CountDownLatch(1);
            zk = new ZooKeeper(connect, sessionMs, e -> {
                if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                    connected.countDown();
                }
            });
            if (!connected.await(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("could not connect to " + connect);
            }
        }

        String register(String iface, String url) throws Exception {
            String parent = "";
            for (String part : new String[] {"sofa-rpc", iface, "providers"}) {
                parent = parent + "/" + part;
                try {
                    zk.create(parent, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.CONTAINER);
                } catch (KeeperException.NodeExistsException e) {
                    // created by another provider
                }
            }
            return zk.create(path(iface, url), new byte[] {1}, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
        }

        void crash() {
            zk.getTestable().injectSessionExpiration();
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
