package io.sluice.core.config;

/**
 * Request ids and trace context of an HTTP listener ({@code http.tracing}).
 *
 * @param requestId     send {@code x-request-id} upstream: the client's if it sent one (up to 128
 *                      visible characters), else a new random one
 * @param echoRequestId also send it back in the response
 * @param traceparent   continue the W3C {@code traceparent} (same trace id and sampled flag, a new
 *                      span id for the gateway's hop) or start one when it is missing or malformed
 */
public record RequestTracing(boolean requestId, boolean echoRequestId, boolean traceparent) {

    public RequestTracing {
        if (echoRequestId && !requestId) {
            throw new ConfigException("echo_request_id", true, "false unless request_id is true");
        }
    }

    /** Whether anything is on (a listener whose tracing does nothing keeps none). */
    public boolean any() {
        return requestId || traceparent;
    }
}
