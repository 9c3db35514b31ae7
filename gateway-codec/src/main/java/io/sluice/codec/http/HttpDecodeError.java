package io.sluice.codec.http;

/**
 * What {@link Http1Decoder} emits, once, when the input is not HTTP/1.x it accepts; everything
 * after it on that connection is discarded. {@code status} is the HTTP status a server answers
 * with (400, 414, 431, 501, 505); {@code reason} says precisely what was wrong.
 */
public record HttpDecodeError(int status, String reason) {
}
