package io.sluice.server.tls;

import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.OpenSslSessionTicketKey;
import io.netty.handler.ssl.SniHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.concurrent.EventExecutor;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.TlsConfig;
import io.sluice.core.time.Scheduler;
import io.sluice.server.channel.SluicePipeline;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Downstream TLS of one listener: the current {@link TlsSnapshot} (a volatile, swapped whole by a
 * reload or a certificate rotation), the handlers each new connection gets, the ticket keys and the
 * meters. Connections read the snapshot once, when their TLS handlers are added.
 */
public final class DownstreamTls implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DownstreamTls.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final String listener;
    private final SslProvider provider;
    private final TlsMetrics metrics;
    private final Function<EventExecutor, Scheduler> schedulers;
    private volatile TlsSnapshot current;
    /** Newest first: the current key and the one before it (tickets under it still resume). */
    private volatile OpenSslSessionTicketKey[] ticketKeys;
    private CertificateWatcher watcher;

    private DownstreamTls(String listener, SslProvider provider, TlsMetrics metrics,
                          Function<EventExecutor, Scheduler> schedulers) {
        this.listener = listener;
        this.provider = provider;
        this.metrics = metrics;
        this.schedulers = schedulers;
    }

    /**
     * Loads a listener's certificates.
     *
     * @throws ConfigException naming the field under {@code tls} when a file is missing or invalid
     */
    public static DownstreamTls start(String listener, TlsConfig config, MeterRegistry registry,
                                      Function<EventExecutor, Scheduler> schedulers) {
        SslProvider provider = TlsProvider.provider();
        DownstreamTls t = new DownstreamTls(listener, provider, new TlsMetrics(registry, listener), schedulers);
        if (config.sessionTickets()) {
            t.ticketKeys = new OpenSslSessionTicketKey[]{newTicketKey()};
        }
        try {
            t.current = TlsSnapshot.load(config, provider, t.ticketKeys);
        } catch (ConfigException e) {
            t.metrics.close();
            throw e;
        }
        t.exportExpiry();
        if (provider == SslProvider.OPENSSL && config.sessionTickets() && !SessionTickets.available()) { // loads it off the event loop
            log.warn("listener {}: TLS 1.3 session tickets will leave with the first response (tcnative SSL not accessible)", listener);
        }
        if (provider == SslProvider.OPENSSL && !config.sessionTickets() && !SessionTickets.canDisable()) {
            log.warn("listener {}: session_tickets is false but TLS 1.3 tickets cannot be turned off (tcnative SSL not accessible)", listener);
        }
        log.info("listener {}: TLS {} with {} certificate(s), client_auth {}, provider {}", listener,
                config.protocols(), config.certificates().size(), config.clientAuth().jsonName(), provider);
        return t;
    }

    public String listener() {
        return listener;
    }

    public TlsMetrics metrics() {
        return metrics;
    }

    public TlsSnapshot current() {
        return current;
    }

    Scheduler scheduler(EventExecutor loop) {
        return schedulers.apply(loop);
    }

    /**
     * Adds the SSL handler and {@link SluicePipeline#TLS_HANDSHAKE} to a new connection's pipeline:
     * after the handler named {@code after}, or first when it is null or absent. The snapshot is read
     * here, once per connection. A listener with one certificate gets that certificate's
     * {@code SslHandler} at once (named as Netty's {@code SniHandler} names the handler it is replaced
     * by); with several, {@link SluicePipeline#SNI} parses the ClientHello and replaces itself with the
     * chosen certificate's.
     */
    public void addHandlers(ChannelPipeline p, String after) {
        TlsSnapshot s = current;
        boolean noTickets = !s.config().sessionTickets();
        SslContext only = s.only();
        ChannelHandler first;
        String firstName;
        if (only != null) {
            first = configure(only.newHandler(p.channel().alloc()), noTickets);
            firstName = SSL_HANDLER;
        } else {
            first = new SniHandler(this::select, 0) {
                @Override
                protected SslHandler newSslHandler(SslContext context, io.netty.buffer.ByteBufAllocator alloc) {
                    return configure(super.newSslHandler(context, alloc), noTickets);
                }
            };
            firstName = SluicePipeline.SNI;
        }
        TlsConnectionHandler hs = new TlsConnectionHandler(this, s.config().handshakeTimeout().toNanos());
        p.channel().attr(TlsRequests.LISTENER).set(this);
        if (after != null && p.get(after) != null) {
            p.addAfter(after, firstName, first);
            p.addAfter(firstName, SluicePipeline.TLS_HANDSHAKE, hs);
        } else {
            p.addFirst(SluicePipeline.TLS_HANDSHAKE, hs);
            p.addFirst(firstName, first);
        }
    }

    /** The name of a connection's {@code SslHandler}: the one {@code SniHandler} gives the handler it puts in its place. */
    static final String SSL_HANDLER = SslHandler.class.getName();

    private static SslHandler configure(SslHandler h, boolean noTickets) {
        h.setHandshakeTimeoutMillis(0); // the TLS_HANDSHAKE handler times the handshake on the listener's scheduler
        if (noTickets) {
            SessionTickets.disable(h.engine()); // Netty re-enables TLS 1.3 tickets on every engine
        }
        return h;
    }

    private SslContext select(String hostname) {
        return current.select(hostname);
    }

    /**
     * Reload with a new config (same listener). Unchanged: nothing happens. A config whose files do
     * not load keeps the running certificates (one log line, {@code sluice_tls_reloads_total{outcome="failure"}}).
     *
     * @return true if the new certificates are in use
     */
    public boolean update(TlsConfig config) {
        if (config.equals(current.config())) {
            return true;
        }
        return reload(config, "config reload");
    }

    /** The certificate files changed on disk: load them again (same rules as {@link #update}). */
    public boolean reloadFiles(String why) {
        return reload(current.config(), why);
    }

    private synchronized boolean reload(TlsConfig config, String why) {
        OpenSslSessionTicketKey[] keys = config.sessionTickets() ? ticketKeys : null;
        if (config.sessionTickets() && keys == null) {
            keys = ticketKeys = new OpenSslSessionTicketKey[]{newTicketKey()};
        }
        TlsSnapshot next;
        try {
            next = TlsSnapshot.load(config, provider, keys);
        } catch (ConfigException e) {
            metrics.reloaded(false);
            log.warn("listener {}: TLS certificates not reloaded ({}), the running ones stay: {}", listener, why, e.getMessage());
            return false;
        }
        current = next;
        metrics.reloaded(true);
        exportExpiry();
        log.info("listener {}: TLS certificates reloaded ({}): {}", listener, why, next.loaded().stream()
                .map(l -> l.name() + " until " + l.notAfter()).toList());
        return true;
    }

    /**
     * Makes a new session ticket key, the previous one kept for decryption (tickets issued under it
     * still resume), and installs both in every current context. Runs on the rotation schedule.
     */
    public synchronized void rotateTicketKeys() {
        if (!current.config().sessionTickets()) {
            return;
        }
        OpenSslSessionTicketKey[] old = ticketKeys;
        OpenSslSessionTicketKey[] keys = old == null || old.length == 0
                ? new OpenSslSessionTicketKey[]{newTicketKey()}
                : new OpenSslSessionTicketKey[]{newTicketKey(), old[0]};
        ticketKeys = keys;
        for (SslContext c : current.contexts()) {
            TlsSnapshot.installTicketKeys(c, keys);
        }
    }

    /** The ticket keys in use, newest first (null: tickets off). */
    public OpenSslSessionTicketKey[] ticketKeys() {
        return ticketKeys;
    }

    private static OpenSslSessionTicketKey newTicketKey() {
        byte[] name = new byte[OpenSslSessionTicketKey.NAME_SIZE];
        byte[] hmac = new byte[OpenSslSessionTicketKey.HMAC_KEY_SIZE];
        byte[] aes = new byte[OpenSslSessionTicketKey.AES_KEY_SIZE];
        RANDOM.nextBytes(name);
        RANDOM.nextBytes(hmac);
        RANDOM.nextBytes(aes);
        return new OpenSslSessionTicketKey(name, hmac, aes);
    }

    private void exportExpiry() {
        Map<String, Supplier<Number>> days = new HashMap<>();
        for (TlsSnapshot.Loaded l : current.loaded()) {
            String name = l.name();
            days.put(name, () -> daysLeft(name));
        }
        metrics.certificates(days);
    }

    private double daysLeft(String name) {
        for (TlsSnapshot.Loaded l : current.loaded()) {
            if (l.name().equals(name)) {
                return Duration.between(Instant.now(), l.notAfter()).toSeconds() / 86_400.0;
            }
        }
        return Double.NaN;
    }

    /**
     * Starts watching the files and rotating ticket keys on {@code control}, a scheduler that may
     * block (not a data-path event loop).
     */
    public synchronized void watch(Scheduler control) {
        if (watcher == null) {
            watcher = CertificateWatcher.start(this, control);
        }
    }

    /** Stops watching files and rotating keys (a listener that retired); its meters stay until {@link #close}. */
    public synchronized void stopWatching() {
        if (watcher != null) {
            watcher.close();
            watcher = null;
        }
    }

    @Override
    public synchronized void close() {
        if (watcher != null) {
            watcher.close();
            watcher = null;
        }
        metrics.close();
    }
}
