/**
 * SOFA Bolt framing (v1 and v2, CRC32), zero-copy.
 *
 * <p>Pipeline: {@link BoltFrameDecoder} (per connection) and
 * {@link BoltFrameEncoder#INSTANCE} (shared), then a handler that receives
 * {@link BoltFrame} (owns it: write or release) and
 * {@link BoltDecodeError} (no buffer; answer with
 * {@link BoltFrames#codecErrorResponse} when
 * {@link BoltDecodeError#answerable()}, then close unless
 * {@link BoltDecodeError#recoverable()}).
 *
 * <p>Proxy recipe (what gateway-server's Bolt proxy does): route on {@code frame.service()}, then {@code targetService()},
 * {@code methodName()}; answer heartbeats with {@code BoltFrames.heartbeatAck}; for a request,
 * remember {@code requestId()}, {@code rewriteRequestId(upstreamId)} and write the same frame
 * upstream; on the response, {@code rewriteRequestId(originalId)} and write it downstream; make
 * failures with {@code BoltFrames.errorResponse(alloc, request, BoltStatus.X, detail)} (always a
 * non-empty body, in the client's framing).
 */
package io.sluice.codec.bolt;
