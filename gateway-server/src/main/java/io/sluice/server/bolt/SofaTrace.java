package io.sluice.server.bolt;

import io.sluice.codec.bolt.BoltFrame;

import java.nio.charset.StandardCharsets;

/**
 * SOFATracer's context in a Bolt request's header map: {@code sofaTraceId} and {@code sofaRpcId},
 * as SOFARPC writes them (flattened under {@code rpc_trace_context.}) or bare. The gateway forwards
 * the header map unchanged, so the context travels on; this only reads it for the access log.
 */
final class SofaTrace {

    private static final byte[] TRACE_ID = "rpc_trace_context.sofaTraceId".getBytes(StandardCharsets.UTF_8);
    private static final byte[] BARE_TRACE_ID = "sofaTraceId".getBytes(StandardCharsets.UTF_8);
    private static final byte[] RPC_ID = "rpc_trace_context.sofaRpcId".getBytes(StandardCharsets.UTF_8);
    private static final byte[] BARE_RPC_ID = "sofaRpcId".getBytes(StandardCharsets.UTF_8);

    private SofaTrace() {
    }

    /** {@code traceId} or {@code traceId/rpcId}, or null when the request carries no trace context. */
    static String traceId(BoltFrame f) {
        String id = f.header(TRACE_ID);
        String rpc;
        if (id != null) {
            rpc = f.header(RPC_ID);
        } else {
            id = f.header(BARE_TRACE_ID);
            if (id == null) {
                return null;
            }
            rpc = f.header(BARE_RPC_ID);
        }
        return rpc == null ? id : id + "/" + rpc;
    }
}
