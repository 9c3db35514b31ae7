/**
 * The Bolt (SOFARPC) proxy: {@link io.sluice.server.bolt.BoltServerInitializer} builds the
 * downstream pipeline ({@code [meter →] bolt-decoder → bolt-proxy}, see
 * {@link io.sluice.server.channel.SluicePipeline}; no encoder: a frame is written as its bytes);
 * {@code BoltProxyHandler} routes each request and hands it, bytes unchanged but for the request
 * id, to a multiplexed {@code BoltUpstreamConnection} of the same event loop, taken round robin
 * from the loop's {@code BoltUpstreamPool} ({@code pool.bolt_connections_per_host} per host and
 * client framing). Ids are remapped per upstream connection and restored on the way back
 * (spec §1.10); heartbeats are answered locally; oneway is not tracked; every gateway-made
 * answer carries a non-empty body (spec §4.4). The seams to the upstream side are
 * {@code PendingListener} (how a request ends) and {@code BoltRequest} (what is sent).
 *
 * <p>Nothing here is public API except {@link io.sluice.server.bolt.BoltListenerContext} and
 * {@link io.sluice.server.bolt.BoltServerInitializer}, which {@code Gateway} wires.
 */
package io.sluice.server.bolt;
