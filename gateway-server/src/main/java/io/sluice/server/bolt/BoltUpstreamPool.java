package io.sluice.server.bolt;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelHandler;
import io.netty.channel.EventLoop;
import io.sluice.codec.bolt.BoltFraming;
import io.sluice.core.cluster.Host;
import io.sluice.core.time.Scheduler;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.tls.upstream.UpstreamTlsContexts;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The multiplexed upstream Bolt connections of ONE event loop: per host, up to
 * {@code pool.boltConnectionsPerHost} connections, used round robin, opened lazily and replaced
 * when they close. Only this loop touches it, so there are no locks.
 *
 * <p>Connections are kept apart by the client framing they carry (v1, v2/ver1 1, v2/ver1 2): a
 * bolt server pins the framing of a connection from its first frame and answers everything on it
 * in that framing, so frames are forwarded unchanged only to a connection of their own kind.
 */
final class BoltUpstreamPool {

    private final EventLoop loop;
    private final Bootstrap bootstrap;
    private final int maxFrameLength;
    private final Scheduler scheduler;
    private final Map<Host, Slots> hosts = new HashMap<>();
    /** The host of the last {@link #acquire} and its slots (a one-entry cache in front of {@link #hosts}). */
    private Host lastHost;
    private Slots lastSlots;
    /** Open (or opening) connections, written by the loop only, readable from anywhere. */
    private volatile int open;

    private final Function<String, ChannelHandler> meters;
    /** The clusters' upstream TLS contexts (set once by the listener context; null: no cluster has TLS). */
    volatile UpstreamTlsContexts upstreamTls;

    /**
     * @param template  the bootstrap upstream connections are cloned from (on {@code loop})
     * @param scheduler the clock and timers of this loop (request timeouts, keep-alive checks)
     */
    BoltUpstreamPool(EventLoop loop, Bootstrap template, int maxFrameLength, Scheduler scheduler,
                     Function<String, ChannelHandler> meters) {
        this.meters = meters;
        this.loop = loop;
        this.scheduler = scheduler;
        this.maxFrameLength = maxFrameLength;
        this.bootstrap = template;
    }

    EventLoop loop() {
        return loop;
    }

    /** A connection to {@code host} for frames of {@code framing}: the next of the host's set, opened if needed. */
    BoltUpstreamConnection acquire(Host host, ClusterBalancer cluster, BoltFraming framing) {
        int n = cluster.config().pool().boltConnectionsPerHost();
        Slots s;
        if (host == lastHost) {
            s = lastSlots; // one cluster host serves most requests of a loop in a row: no hash lookup
        } else {
            s = hosts.get(host);
            if (s == null) {
                s = new Slots();
                hosts.put(host, s);
            }
            lastHost = host;
            lastSlots = s;
        }
        int kind = kind(framing);
        BoltUpstreamConnection[] set = s.sets[kind];
        if (set == null || set.length != n) {
            BoltUpstreamConnection[] resized = new BoltUpstreamConnection[n];
            if (set != null) {
                System.arraycopy(set, 0, resized, 0, Math.min(n, set.length));
                for (int i = n; i < set.length; i++) {
                    if (set[i] != null) {
                        set[i].closeWhenIdle();
                    }
                }
            }
            set = resized;
            s.sets[kind] = set;
        }
        int i = (s.next[kind]++ & Integer.MAX_VALUE) % n;
        BoltUpstreamConnection c = set[i];
        if (c == null || c.isClosed()) {
            c = new BoltUpstreamConnection(this, host, cluster, framing, maxFrameLength, scheduler);
            set[i] = c;
            open++;
            c.connect(bootstrap, meters == null ? null : meters.apply(cluster.name()), upstreamTls);
        }
        return c;
    }

    /** A connection closed (by itself or by us); its slot is refilled on the next acquire. */
    void closed(BoltUpstreamConnection c) {
        open--;
        Slots s = hosts.get(c.host());
        if (s == null) {
            return;
        }
        boolean empty = true;
        for (BoltUpstreamConnection[] set : s.sets) {
            if (set == null) {
                continue;
            }
            for (int i = 0; i < set.length; i++) {
                if (set[i] == c) {
                    set[i] = null;
                }
                empty &= set[i] == null;
            }
        }
        if (empty) {
            hosts.remove(c.host());
            if (lastHost == c.host()) {
                lastHost = null;
                lastSlots = null;
            }
        }
    }

    int openCount() {
        return open;
    }

    /** Closes every connection (shutdown); their pending requests fail at once. */
    void closeAll() {
        List<BoltUpstreamConnection> all = new ArrayList<>();
        for (Slots s : hosts.values()) {
            for (BoltUpstreamConnection[] set : s.sets) {
                if (set != null) {
                    for (BoltUpstreamConnection c : set) {
                        if (c != null) {
                            all.add(c);
                        }
                    }
                }
            }
        }
        for (BoltUpstreamConnection c : all) {
            c.close();
        }
    }

    private static int kind(BoltFraming f) {
        return f.protocol() == 1 ? 0 : f.ver1() == 1 ? 1 : 2;
    }

    private static final class Slots {
        final BoltUpstreamConnection[][] sets = new BoltUpstreamConnection[3][];
        final int[] next = new int[3];
    }
}
