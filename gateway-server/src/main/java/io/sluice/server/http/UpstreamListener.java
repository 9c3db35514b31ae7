package io.sluice.server.http;

import io.netty.channel.Channel;

/**
 * The seam between an upstream HTTP connection's {@link UpstreamHandler} and the exchange that
 * borrowed it (today {@link HttpProxyHandler}; later a retry or h2 bridge): what the upstream
 * connection sees while it is owned. Called on the shared event loop.
 */
public interface UpstreamListener {

    /** A decoded response part ({@code HttpHead}, {@code HttpBody} or {@code HttpDecodeError}); takes ownership. */
    void onUpstreamRead(Object msg);

    /** The upstream read burst ended (flush what went downstream). */
    void onUpstreamReadComplete();

    /** The upstream connection's writability changed (resume or pause reading the client). */
    void onUpstreamWritabilityChanged();

    /** An I/O or decode error; the close that follows is reported through {@link #onUpstreamInactive}. */
    void onUpstreamError(Throwable cause);

    /** The upstream connection {@code ch} closed while owned. */
    void onUpstreamInactive(Channel ch);
}
