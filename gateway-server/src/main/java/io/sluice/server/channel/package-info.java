/**
 * The protocol-neutral channel layer every protocol's handlers sit on: pipeline names and order
 * ({@link io.sluice.server.channel.SluicePipeline}), the listener context shape
 * ({@link io.sluice.server.channel.ListenerContext}), drain ({@link io.sluice.server.channel.DrainEvent}),
 * the per-connection timer ({@link io.sluice.server.channel.ConnectionTimer}) and the request-end
 * event ({@link io.sluice.server.channel.RequestEnd}). A protocol (HTTP/1.1, Bolt; later TLS,
 * HTTP/2) is a set of handlers on this layer, never a branch inside another protocol's handler.
 */
package io.sluice.server.channel;
