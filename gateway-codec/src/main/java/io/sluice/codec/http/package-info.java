/**
 * A forwarding HTTP/1.1 codec: heads are indexed in place, bodies are passed on as slices of the
 * input with their framing, and nothing is re-encoded that does not change.
 */
package io.sluice.codec.http;
