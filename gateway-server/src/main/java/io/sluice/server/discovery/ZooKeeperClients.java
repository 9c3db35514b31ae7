package io.sluice.server.discovery;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * One Curator client (one ZooKeeper session, one connection) per registry address and session
 * settings, shared by every cluster that follows a service there (route by registry may follow many),
 * reference-counted: the last cluster to let go closes it. Thread-safe.
 */
final class ZooKeeperClients {

    private record Key(String connectString, int sessionMs, int connectionMs) {
    }

    private static final class Entry {
        final CuratorFramework client;
        /** The one thread on which every source of this client handles events and publishes (not one per source). */
        final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sluice-zk-discovery");
            t.setDaemon(true);
            return t;
        });
        int refs;

        Entry(CuratorFramework client) {
            this.client = client;
        }
    }

    /** A use of a shared client; {@link #release} once. */
    interface Lease {
        CuratorFramework client();

        /** The thread shared by the sources of this client (shut down with the client). */
        ScheduledExecutorService executor();

        void release();
    }

    private final Map<Key, Entry> clients = new HashMap<>();

    synchronized Lease acquire(String connectString, int sessionMs, int connectionMs) {
        Key key = new Key(connectString, sessionMs, connectionMs);
        Entry e = clients.get(key);
        if (e == null) {
            CuratorFramework c = CuratorFrameworkFactory.builder()
                    .connectString(connectString)
                    .sessionTimeoutMs(sessionMs)
                    .connectionTimeoutMs(connectionMs)
                    .retryPolicy(new ExponentialBackoffRetry(1000, 29, 5000))
                    .threadFactory(r -> {
                        Thread t = new Thread(r, "sluice-zk-curator");
                        t.setDaemon(true);
                        return t;
                    })
                    .build();
            c.start();
            e = new Entry(c);
            clients.put(key, e);
        }
        e.refs++;
        Entry entry = e;
        return new Lease() {
            private boolean released;

            @Override
            public CuratorFramework client() {
                return entry.client;
            }

            @Override
            public ScheduledExecutorService executor() {
                return entry.executor;
            }

            @Override
            public void release() {
                synchronized (ZooKeeperClients.this) {
                    if (released) {
                        return;
                    }
                    released = true;
                    if (--entry.refs == 0) {
                        clients.remove(key);
                        entry.client.close();
                        entry.executor.shutdownNow();
                    }
                }
            }
        };
    }

    /** Clients open now (for tests). */
    synchronized int open() {
        return clients.size();
    }
}
