package io.sluice.codec.bolt;

/** Bolt command type, the byte after the protocol code (v1) or after ver1 (v2). */
public enum BoltType {
    /** 0x00: a response (RPC response or heartbeat ack). */
    RESPONSE(0),
    /** 0x01: a request that expects a response (RPC request or heartbeat). */
    REQUEST(1),
    /** 0x02: a oneway request; never answered. */
    ONEWAY(2);

    private static final BoltType[] BY_CODE = {RESPONSE, REQUEST, ONEWAY};

    private final int code;

    BoltType(int code) {
        this.code = code;
    }

    /** The wire value. */
    public int code() {
        return code;
    }

    /** The type with this wire value, or {@code null} if it is not defined. */
    public static BoltType of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
