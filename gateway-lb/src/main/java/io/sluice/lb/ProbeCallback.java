package io.sluice.lb;

/** Receives the verdict of one {@link HealthProbe#probe} call. Safe to call from any thread; later calls are ignored. */
@FunctionalInterface
public interface ProbeCallback {

    /**
     * @param success true if the host passed the probe
     * @param reason  short human-readable detail for logs ("connect refused", "status 503"); may be null on success
     */
    void complete(boolean success, String reason);

    /** The host passed. */
    default void succeeded() {
        complete(true, "probe passed");
    }

    /** The host failed, with a reason for the transition log. */
    default void failed(String reason) {
        complete(false, reason);
    }
}
