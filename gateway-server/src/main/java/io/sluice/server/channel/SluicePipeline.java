package io.sluice.server.channel;

/**
 * Names and order of the handlers in every Sluice pipeline (in the manner of reactor-netty's
 * {@code NettyPipeline}). Handlers are added with these names, in the order listed per pipeline.
 *
 * <pre>
 * downstream HTTP/1.1:  [meter →] [h2c-sniffer →] http-read-marker → http-decoder → http-proxy
 *                       (h2c-sniffer only while HTTP/2 is on, until the first bytes)
 * downstream HTTP/2:    [meter →] h2-codec → h2-multiplex → h2-connection   (each stream a child
 *                                                       channel with its own stream proxy)
 * downstream Bolt:      [meter →] bolt-decoder → bolt-proxy
 * downstream auto:      [meter →] protocol-detector   (replaced by the HTTP or Bolt handlers after
 *                                                       the meter once the first byte arrives)
 * downstream TLS:       [meter →] sni → tls-handshake → (the protocol's handlers, as above)
 *                       (at the ClientHello, sni replaces itself with the chosen certificate's
 *                        SslHandler, which Netty names after its class; a listener with one
 *                        certificate gets that SslHandler, so named, in place of sni at once)
 * downstream auto+TLS:  [meter →] protocol-detector → (first byte 0x16) sni → tls-handshake →
 *                       protocol-detector (inside TLS) → HTTP or Bolt handlers
 * closing (any protocol, after the gateway's error answer):
 *                       [meter →] linger → …          (reads and discards until the close)
 * upstream HTTP/1.1:    [upstream-meter →] http-upstream-decoder → http-upstream
 * upstream Bolt:        [upstream-meter →] bolt-upstream-decoder → bolt-upstream
 * </pre>
 *
 * There are no encoders: the HTTP proxy writes heads as byte ranges and bodies as received slices,
 * and a decoded Bolt frame already is its wire form. The meters are added only when metrics are
 * recorded. Later layers (TLS: {@code sni → tls} first; HTTP/2) get their names here too.
 */
public final class SluicePipeline {

    /** Downstream, first when metrics are on: {@code ConnectionMeter} (bytes, close reasons). */
    public static final String METER = "meter";
    /** Downstream, auto listeners: {@code ProtocolDetector}, until the first byte. */
    public static final String PROTOCOL_DETECTOR = "protocol-detector";

    /** Downstream TLS: Netty's {@code SniHandler}, replaced by the {@code SslHandler} of the chosen certificate. */
    public static final String SNI = "sni";
    /** Downstream TLS: {@code TlsConnectionHandler} (handshake timeout, outcome, client identity), after the SSL handler. */
    public static final String TLS_HANDSHAKE = "tls-handshake";

    /** Downstream auto+TLS: the {@code ProtocolDetector} inside TLS, after {@link #TLS_HANDSHAKE}. */
    public static final String TLS_PROTOCOL_DETECTOR = "tls-protocol-detector";

    /** Downstream, while closing after an error answer: {@code LingeringCloseHandler}, right after the meter. */
    public static final String LINGER = "linger";

    /** Downstream HTTP: {@code ReadMarkerHandler}, before the decoder (raw bytes arrived). */
    public static final String HTTP_READ_MARKER = "http-read-marker";
    /** Downstream HTTP: the request {@code Http1Decoder}. */
    public static final String HTTP_DECODER = "http-decoder";
    /** Downstream HTTP: {@code HttpProxyHandler}, last. */
    public static final String HTTP_PROXY = "http-proxy";

    // ---- HTTP/2 (io.sluice.server.http2)
    /** Downstream HTTP: {@code H2cPrefaceSniffer}, first, until the first bytes tell HTTP/1.1 from the h2c preface. */
    public static final String H2C_SNIFFER = "h2c-sniffer";
    /** Downstream HTTP/2: Netty's {@code Http2FrameCodec} with the listener's settings and limits. */
    public static final String H2_CODEC = "h2-codec";
    /** Downstream HTTP/2: Netty's {@code Http2MultiplexHandler} (a child channel per stream). */
    public static final String H2_MULTIPLEX = "h2-multiplex";
    /** Downstream HTTP/2: {@code H2Connection}, last (idle timeout, drain, connection-level frames). */
    public static final String H2_CONNECTION = "h2-connection";

    /** Downstream Bolt: {@code BoltFrameDecoder}. */
    public static final String BOLT_DECODER = "bolt-decoder";
    /** Downstream Bolt: {@code BoltProxyHandler}, last. */
    public static final String BOLT_PROXY = "bolt-proxy";

    /** Upstream, first when metrics are on: the cluster's connection meter. */
    public static final String UPSTREAM_METER = "upstream-meter";
    /** Upstream HTTP: the response {@code Http1Decoder}. */
    public static final String HTTP_UPSTREAM_DECODER = "http-upstream-decoder";
    /** Upstream HTTP: {@code UpstreamHandler}, last (found as {@code pipeline().last()}). */
    public static final String HTTP_UPSTREAM = "http-upstream";
    /** Both sides of an upgraded HTTP connection: {@code UpgradeTunnel.Side}, where the decoders were. */
    public static final String HTTP_TUNNEL = "http-tunnel";
    /** Upstream Bolt: {@code BoltFrameDecoder}. */
    public static final String BOLT_UPSTREAM_DECODER = "bolt-upstream-decoder";
    /** Upstream Bolt: {@code BoltUpstreamConnection}, last. */
    public static final String BOLT_UPSTREAM = "bolt-upstream";

    private SluicePipeline() {
    }
}
