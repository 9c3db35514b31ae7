package io.sluice.server.tls.upstream;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelPromise;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.UpstreamTlsConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One cluster's upstream TLS at run time: the client {@link SslContext} built once from its
 * {@code tls} block (shared by every event loop and connection), the handshake meter
 * {@code sluice_upstream_tls_handshakes_total{cluster,result,reason}} and the per-host failure log
 * (one line when a host's handshakes start failing or fail for another reason, one when they
 * succeed again).
 *
 * <p>Connections: {@link #addHandler} puts the {@link SslHandler} first in a new upstream
 * channel's pipeline (it starts the handshake once connected); {@link #handshake} turns the
 * connect future into one that completes when the handshake did, failing with an
 * {@link UpstreamTlsException} that names the reason. The proxies treat that like a failed connect.
 */
public final class UpstreamTls {

    /** The pipeline name of the upstream {@link SslHandler}. */
    public static final String HANDLER = "upstream-tls";
    static final String METER = "sluice.upstream.tls.handshakes";

    private static final Logger log = LoggerFactory.getLogger(UpstreamTls.class);

    private final String cluster;
    private final UpstreamTlsConfig config;
    private final SslContext context;
    /** http2: the context offering ALPN h2 ({@code upstream_protocol: h2}), null for other clusters. */
    private final SslContext h2Context;
    final Object stamp;
    private final MeterRegistry registry;
    private final Counter succeeded;
    private final ConcurrentHashMap<String, Counter> failed = new ConcurrentHashMap<>();
    /** Host address -> the reason its last handshake failed; absent while handshakes succeed. */
    private final ConcurrentHashMap<String, String> failing = new ConcurrentHashMap<>();

    UpstreamTls(String cluster, UpstreamTlsConfig config, SslContext context, Object stamp, MeterRegistry registry) {
        this(cluster, config, context, null, stamp, registry);
    }

    UpstreamTls(String cluster, UpstreamTlsConfig config, SslContext context, SslContext h2Context, Object stamp,
                MeterRegistry registry) {
        this.cluster = cluster;
        this.config = config;
        this.context = context;
        this.h2Context = h2Context;
        this.stamp = stamp;
        this.registry = registry;
        this.succeeded = registry == null ? null : counter("success", "ok");
    }

    public String cluster() {
        return cluster;
    }

    public UpstreamTlsConfig config() {
        return config;
    }

    public SslContext context() {
        return context;
    }

    /** http2: the context offering ALPN {@code h2}, or null when the cluster is not {@code upstream_protocol: h2}. */
    public SslContext h2Context() {
        return h2Context;
    }

    /** http2: as {@link #addHandler}, offering ALPN {@code h2} (the caller checks {@link #h2Context()} first). */
    public void addH2Handler(Channel ch, Host host, Duration handshakeTimeout) {
        SslHandler h = h2Context.newHandler(ch.alloc(), peerName(host), host.port());
        h.setHandshakeTimeoutMillis(Math.max(1, handshakeTimeout.toMillis()));
        ch.pipeline().addLast(HANDLER, h);
    }

    /** The name sent as SNI and checked against the certificate: {@code sni}, else the host part of the address. */
    public String peerName(Host host) {
        return config.sni() != null ? config.sni() : host.host();
    }

    /** Adds the TLS handler for {@code host} to a new upstream channel (call first in its initializer, after any meter). */
    public void addHandler(Channel ch, Host host, Duration handshakeTimeout) {
        SslHandler h = context.newHandler(ch.alloc(), peerName(host), host.port());
        h.setHandshakeTimeoutMillis(Math.max(1, handshakeTimeout.toMillis()));
        ch.pipeline().addLast(HANDLER, h);
    }

    /**
     * A future that completes when {@code connect} did and then the TLS handshake did. On a failed
     * handshake the channel is closed and the future fails with an {@link UpstreamTlsException}.
     *
     * @param tls the cluster's TLS, or null when none was built for its config (the connection fails)
     */
    public static ChannelFuture handshake(UpstreamTls tls, ChannelFuture connect, Host host, String cluster) {
        Channel ch = connect.channel();
        if (tls == null) {
            ch.close();
            return ch.newFailedFuture(new UpstreamTlsException("no TLS context for upstream " + host.address()
                    + " of cluster " + cluster + " (its tls block was not loaded)", TlsFailure.NO_CONTEXT, null));
        }
        return tls.handshake(connect, host);
    }

    private ChannelFuture handshake(ChannelFuture connect, Host host) {
        Channel ch = connect.channel();
        ChannelPromise done = ch.newPromise();
        connect.addListener((ChannelFuture f) -> {
            if (!f.isSuccess()) {
                done.tryFailure(f.cause());
                return;
            }
            SslHandler h = (SslHandler) ch.pipeline().get(HANDLER);
            if (h == null) {
                done.tryFailure(new UpstreamTlsException("TLS handler missing on the connection to " + host.address(),
                        TlsFailure.OTHER, null));
                ch.close();
                return;
            }
            h.handshakeFuture().addListener(hf -> {
                if (hf.isSuccess()) {
                    succeeded(host);
                    done.trySuccess();
                } else {
                    UpstreamTlsException e = failed(host, hf.cause());
                    ch.close();
                    done.tryFailure(e);
                }
            });
        });
        return done;
    }

    private void succeeded(Host host) {
        if (succeeded != null) {
            succeeded.increment();
        }
        if (!failing.isEmpty() && failing.remove(host.address()) != null) {
            log.info("upstream TLS to {} of cluster {}: handshakes succeed again", host.address(), cluster);
        }
    }

    /** Counts and (on a change of reason) logs a failed handshake; returns the exception the proxies report. */
    UpstreamTlsException failed(Host host, Throwable cause) {
        String peer = peerName(host);
        TlsFailure why = TlsFailure.of(cause, peer);
        if (registry != null) {
            failed.computeIfAbsent(why.reason, r -> counter("failure", r)).increment();
        }
        String message = "TLS handshake with upstream " + host.address() + " of cluster " + cluster + " failed: "
                + why.words;
        String before = failing.put(host.address(), why.reason);
        if (!why.reason.equals(before)) {
            log.warn("{} [reason={}]", message, why.reason);
        }
        return new UpstreamTlsException(message, why.reason, cause);
    }

    private Counter counter(String result, String reason) {
        return Counter.builder(METER).tags("cluster", cluster, "result", result, "reason", reason)
                .description("TLS handshakes with upstream hosts, by outcome and failure reason").register(registry);
    }
}
