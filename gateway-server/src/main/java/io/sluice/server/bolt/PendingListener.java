package io.sluice.server.bolt;

import io.sluice.codec.bolt.BoltFrame;
import io.sluice.core.cluster.Outcome;
import io.sluice.server.metrics.RequestOutcome;

/**
 * The seam between a Bolt upstream connection ({@link BoltUpstreamConnection}) and the downstream
 * side that sent requests over it (today {@link BoltProxyHandler}; later a retry or h2 bridge):
 * how a {@link Pending} request ends, and when a connection that was full can take writes again.
 * Called on the shared event loop. {@code p} is recycled after the call returns: implementations
 * must not keep it.
 */
interface PendingListener {

    /** The upstream answered {@code p}; takes ownership of {@code response}. */
    void onResponse(Pending p, BoltFrame response);

    /**
     * {@code p} failed without a response: answer the client with {@code status}.
     *
     * @param hostOutcome what the failure says about the host (null: nothing, e.g. the gateway's own closing)
     */
    void onFailed(Pending p, int status, String message, RequestOutcome outcome, Outcome hostOutcome);

    /** An upstream connection this listener waited for ({@link BoltUpstreamConnection#block}) can take writes again. */
    void upstreamWritable(BoltUpstreamConnection up);
}
