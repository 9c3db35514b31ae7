package io.sluice.server.tls.upstream;

import io.micrometer.core.instrument.MeterRegistry;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.ReferenceCountedOpenSslContext;
import io.netty.handler.ssl.SslContext;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.UpstreamTlsConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The upstream TLS of every cluster of one gateway, by cluster name: built at start and on reload
 * (never on an event loop of the data path, never per connection), published as one immutable
 * map the upstream pools and health probes read. A cluster whose {@code tls} block and files
 * (path, size, modification time) are unchanged keeps its context, its client session cache and
 * its failure state; a changed block or file gets a new context for new connections, while open
 * connections keep the one they were made with.
 */
public final class UpstreamTlsContexts {

    private static final Logger log = LoggerFactory.getLogger(UpstreamTlsContexts.class);

    private final MeterRegistry registry;
    private volatile Map<String, UpstreamTls> current = Map.of();
    /** Built by the last {@link #prepare} and not yet applied (a reload validates before it applies). */
    private Map<String, UpstreamTls> prepared = Map.of();

    /** @param registry where the handshake meters go, or null for none */
    public UpstreamTlsContexts(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * The TLS of {@code cluster} for a new connection, or null if none was built for its current
     * {@code tls} block (the connection must then fail, never fall back to cleartext).
     */
    public UpstreamTls lookup(ClusterConfig cluster) {
        UpstreamTls t = current.get(cluster.name());
        return t != null && (t.config() == cluster.tls() || t.config().equals(cluster.tls())) ? t : null;
    }

    /** Null-safe {@link #lookup}: {@code contexts} may be null in tests that build pools by hand. */
    public static UpstreamTls lookup(UpstreamTlsContexts contexts, ClusterConfig cluster) {
        return contexts == null ? null : contexts.lookup(cluster);
    }

    /**
     * Builds the contexts {@code clusters} need that are not built already (reading their files),
     * without publishing them; {@link #apply} publishes. Call off the event loops.
     *
     * @throws ConfigException naming {@code clusters[i].tls.<field>} and what is wrong
     */
    public synchronized void prepare(List<ClusterConfig> clusters) {
        prepared = build(clusters);
    }

    /** Builds what is missing (reusing what {@link #prepare} built) and publishes the map for {@code clusters}. */
    public synchronized void apply(List<ClusterConfig> clusters) {
        current = build(clusters);
        prepared = Map.of();
    }

    /** The clusters with TLS and their contexts (admin, tests). */
    public Map<String, UpstreamTls> current() {
        return current;
    }

    private Map<String, UpstreamTls> build(List<ClusterConfig> clusters) {
        Map<String, UpstreamTls> next = new HashMap<>();
        for (int i = 0; i < clusters.size(); i++) {
            ClusterConfig c = clusters.get(i);
            UpstreamTlsConfig t = c.tls();
            if (t == null) {
                continue;
            }
            Object stamp = stamp(t);
            boolean h2 = c.upstreamProtocol() == io.sluice.core.config.UpstreamProtocol.H2; // http2: ALPN h2 too
            UpstreamTls have = reusable(current.get(c.name()), t, stamp, h2);
            if (have == null) {
                have = reusable(prepared.get(c.name()), t, stamp, h2);
            }
            if (have == null) {
                SslContext ctx;
                SslContext h2ctx;
                try {
                    ctx = UpstreamSslContexts.build(t);
                    h2ctx = h2 ? UpstreamSslContexts.build(t, true) : null;
                } catch (ConfigException e) {
                    throw e.under("$.clusters[" + i + "].tls");
                }
                have = new UpstreamTls(c.name(), t, ctx, h2ctx, stamp, registry);
                describe(c.name(), t, ctx);
            }
            next.put(c.name(), have);
        }
        return Map.copyOf(next);
    }

    private static UpstreamTls reusable(UpstreamTls t, UpstreamTlsConfig config, Object stamp, boolean h2) {
        return t != null && t.config().equals(config) && t.stamp.equals(stamp) && (t.h2Context() != null) == h2 ? t : null;
    }

    /** One line per context built; a warning when verification is off. */
    private static void describe(String cluster, UpstreamTlsConfig t, SslContext ctx) {
        String provider = ctx instanceof ReferenceCountedOpenSslContext
                ? "openssl (" + OpenSsl.versionString() + ")" : "jdk";
        if (!t.verify()) {
            log.warn("cluster {}: upstream TLS certificate verification is OFF (tls.verify=false): any certificate is "
                    + "accepted, traffic can be intercepted; provider {}", cluster, provider);
        } else {
            log.info("cluster {}: upstream TLS {} via {}, trust {}{}{}", cluster, t.protocols(), provider,
                    t.caFile() == null ? "system store" : t.caFile(),
                    t.verifyHost() ? ", host names checked" + (t.sni() == null ? "" : " against " + t.sni()) : ", host names NOT checked",
                    t.hasClientCertificate() ? ", client certificate " + (t.certFile() != null ? t.certFile() : t.pkcs12File()) : "");
        }
    }

    /** What identifies the contents of the files a block reads: path, size and modification time of each. */
    private static Object stamp(UpstreamTlsConfig t) {
        List<Object> s = new ArrayList<>();
        for (String f : new String[] {t.caFile(), t.certFile(), t.keyFile(), t.pkcs12File()}) {
            if (f == null) {
                continue;
            }
            Path p = Path.of(f);
            try {
                s.add(List.of(f, Files.size(p), Files.getLastModifiedTime(p).toMillis()));
            } catch (IOException e) {
                s.add(List.of(f, -1L, -1L)); // building it reports the problem
            }
        }
        return List.copyOf(s);
    }
}
