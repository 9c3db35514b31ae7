package io.sluice.server.bolt;

/** Names (and order) of the handlers in Sluice's Bolt pipelines. */
final class BoltPipeline {

    /** Downstream and upstream: {@code BoltFrameDecoder}. */
    static final String FRAME_DECODER = "bolt-frame-decoder";
    /** Downstream and upstream: {@code BoltFrameEncoder.INSTANCE}. */
    static final String FRAME_ENCODER = "bolt-frame-encoder";
    /** Downstream: closes idle client connections; upstream: triggers keep-alive heartbeats. */
    /** Downstream: {@link BoltProxyHandler}. */
    static final String PROXY = "bolt-proxy";
    /** Upstream: {@link BoltUpstreamConnection}. */
    static final String UPSTREAM_HANDLER = "bolt-upstream";

    private BoltPipeline() {
    }
}
