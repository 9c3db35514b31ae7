package io.sluice.server.channel;

/**
 * User event fired on every downstream connection when its listener drains (shutdown, or a reload
 * that moved or removed the listener). Protocol-neutral: every proxy handler reacts in its own
 * way (HTTP: idle connections close after {@code drain_grace}, busy ones after their response;
 * Bolt: once nothing is in flight; the protocol detector: at once, nothing is in flight before
 * the first byte).
 */
public final class DrainEvent {

    public static final DrainEvent INSTANCE = new DrainEvent();

    private DrainEvent() {
    }
}
