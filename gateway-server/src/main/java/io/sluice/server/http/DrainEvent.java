package io.sluice.server.http;

/** User event fired on every downstream connection when the gateway drains: idle ones close, busy ones close after their response. */
public final class DrainEvent {

    public static final DrainEvent INSTANCE = new DrainEvent();

    private DrainEvent() {
    }
}
