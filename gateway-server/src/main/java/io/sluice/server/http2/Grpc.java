package io.sluice.server.http2;

import io.sluice.server.metrics.RequestOutcome;

import java.nio.charset.StandardCharsets;

/**
 * What the gateway needs to know about gRPC: whether a request is one (its content-type), its
 * {@code grpc-timeout}, the status code for an error the gateway makes itself, and the
 * percent-encoding of {@code grpc-message}.
 */
public final class Grpc {

    public static final int OK = 0;
    public static final int CANCELLED = 1;
    public static final int UNKNOWN = 2;
    public static final int DEADLINE_EXCEEDED = 4;
    public static final int PERMISSION_DENIED = 7;
    public static final int RESOURCE_EXHAUSTED = 8;
    public static final int UNIMPLEMENTED = 12;
    public static final int INTERNAL = 13;
    public static final int UNAVAILABLE = 14;

    private Grpc() {
    }

    /** {@code application/grpc} or {@code application/grpc+…} (also with parameters after {@code ;}). */
    public static boolean isGrpc(CharSequence contentType) {
        if (contentType == null || contentType.length() < 16) {
            return false;
        }
        String p = "application/grpc";
        for (int i = 0; i < 16; i++) {
            if (Character.toLowerCase(contentType.charAt(i)) != p.charAt(i)) {
                return false;
            }
        }
        if (contentType.length() == 16) {
            return true;
        }
        char c = contentType.charAt(16);
        return c == '+' || c == ';';
    }

    /**
     * A {@code grpc-timeout} value (1 to 8 ASCII digits and a unit H, M, S, m, u or n) in
     * nanoseconds; -1 when absent or malformed (malformed is treated as absent: no deadline).
     */
    public static long timeoutNanos(CharSequence v) {
        if (v == null) {
            return -1;
        }
        int n = v.length();
        if (n < 2 || n > 9) {
            return -1;
        }
        long value = 0;
        for (int i = 0; i < n - 1; i++) {
            char c = v.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        long unit = switch (v.charAt(n - 1)) {
            case 'H' -> 3_600_000_000_000L;
            case 'M' -> 60_000_000_000L;
            case 'S' -> 1_000_000_000L;
            case 'm' -> 1_000_000L;
            case 'u' -> 1_000L;
            case 'n' -> 1L;
            default -> -1;
        };
        if (unit < 0) {
            return -1;
        }
        return value > Long.MAX_VALUE / unit ? Long.MAX_VALUE : value * unit;
    }

    /**
     * The gRPC status of an error the gateway answers itself (the table Envoy uses, with
     * DEADLINE_EXCEEDED for the gateway's own timeouts).
     */
    public static int statusOf(RequestOutcome outcome, int httpStatus) {
        if (outcome != null) {
            switch (outcome) {
                case NO_ROUTE:
                    return UNIMPLEMENTED;
                case NO_HEALTHY_HOST:
                case CONNECT_FAILURE:
                case UPSTREAM_RESET:
                case OVERLOADED:
                    return UNAVAILABLE;
                case UPSTREAM_TIMEOUT:
                case CONNECT_TIMEOUT:
                case BODY_TIMEOUT:
                case HEADER_TIMEOUT:
                    return DEADLINE_EXCEEDED;
                case BODY_TOO_LARGE:
                case HEADERS_TOO_LARGE:
                    return RESOURCE_EXHAUSTED;
                case BAD_REQUEST:
                case URI_TOO_LONG:
                case CODEC_ERROR:
                    return INTERNAL;
                default:
                    break;
            }
        }
        return switch (httpStatus) {
            case 400 -> INTERNAL;
            case 401 -> 16;
            case 403 -> PERMISSION_DENIED;
            case 404 -> UNIMPLEMENTED;
            case 429, 502, 503, 504 -> UNAVAILABLE;
            default -> UNKNOWN;
        };
    }

    /** {@code grpc-message} encoding: UTF-8, then every byte outside 0x20–0x7E and {@code %} as {@code %XX}. */
    public static String percentEncode(String message) {
        byte[] b = message.getBytes(StandardCharsets.UTF_8);
        StringBuilder sb = new StringBuilder(b.length + 8);
        for (byte x : b) {
            int c = x & 0xFF;
            if (c >= 0x20 && c <= 0x7E && c != '%') {
                sb.append((char) c);
            } else {
                sb.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xF, 16)));
            }
        }
        return sb.toString();
    }
}
