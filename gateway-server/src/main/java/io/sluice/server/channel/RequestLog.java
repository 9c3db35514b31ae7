package io.sluice.server.channel;

/**
 * An observer of request ends ({@link RequestEnd}): metrics ({@code ListenerMetrics}), the access
 * log ({@code AccessLog}); later outlier detection and the retry budget. Called on the event loop
 * of the connection that finished the request, once per request; it must not block, and must not
 * keep the {@link RequestEnd} after returning (copy what it needs).
 */
@FunctionalInterface
public interface RequestLog {

    void requestEnded(RequestEnd end);
}
