package io.sluice.server.bolt;

/**
 * Names (and order) of the handlers in Sluice's Bolt pipelines. There is no encoder: a decoded
 * frame already is its wire form, so the handlers write its bytes ({@code BoltFrame.takeBytes()}).
 */
final class BoltPipeline {

    /** Downstream and upstream: {@code BoltFrameDecoder}. */
    static final String FRAME_DECODER = "bolt-frame-decoder";
    /** Downstream: {@link BoltProxyHandler}. */
    static final String PROXY = "bolt-proxy";
    /** Upstream: {@link BoltUpstreamConnection}. */
    static final String UPSTREAM_HANDLER = "bolt-upstream";

    private BoltPipeline() {
    }
}
