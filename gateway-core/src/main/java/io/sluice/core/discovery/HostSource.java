package io.sluice.core.discovery;

import java.util.List;

/**
 * A source of upstream hosts for one cluster: a service registry, DNS, or an embedder's own system
 * ({@code Gateway.builder().hostSource(name, factory)}, docs/embedding.md). The gateway starts it once
 * and the source publishes the <em>whole</em> current host list through the {@link Sink} whenever it
 * changes — never deltas: the gateway compares with what it has and keeps per-host state (health,
 * ejection, warm-up) for addresses that stay.
 *
 * <p>Threading: {@link #start} and {@link #close} are called off the event loops; the sink may be
 * called from any thread the source owns (not from the gateway's event loops, and it must not block
 * them). Publishing an immutable list is cheap for the gateway; call it at most a few times a second.
 *
 * <p>Outages: a source that loses its backend should say so with {@link Sink#state} and keep quiet
 * about hosts — the gateway keeps serving the last list it got. Publishing an empty list means "there
 * are no hosts" (the cluster's {@code allow_empty} decides whether the gateway believes it).
 */
public interface HostSource extends AutoCloseable {

    /** Where a source publishes. Thread-safe. */
    interface Sink {

        /** The complete current host list (the gateway copies it). */
        void hosts(List<DiscoveredHost> hosts);

        /**
         * The source's connection state changed ({@code connected}, {@code suspended}, {@code lost},
         * {@code reconnected}, or any word the source chooses); one log line and one metric each.
         * While not connected the gateway keeps the last hosts.
         */
        void state(String state, boolean connected);
    }

    /** Starts publishing to {@code sink}; may return before the first list arrives. */
    void start(Sink sink) throws Exception;

    /** Stops publishing and releases what the source holds. */
    @Override
    void close();
}
