package io.sluice.codec.bolt;

/**
 * The framing a peer speaks: protocol code, ver1 and whether RPC frames carry a CRC32 trailer.
 * A gateway answers a client in the framing of the client's request.
 *
 * <p>Heartbeats and heartbeat acks are always written without CRC (the bolt library builds them
 * with an empty switch), whatever the framing says.
 */
public enum BoltFraming {
    /** Protocol code 1 (what SOFARPC and sofaload speak). */
    V1(BoltProtocol.PROTOCOL_V1, 0, false),
    /** Protocol code 2, ver1 1: the v2 layout, never a CRC. */
    V2_VER1(BoltProtocol.PROTOCOL_V2, BoltProtocol.VER1_1, false),
    /** Protocol code 2, ver1 2, CRC switch off. */
    V2_VER2(BoltProtocol.PROTOCOL_V2, BoltProtocol.VER1_2, false),
    /** Protocol code 2, ver1 2, CRC switch on (the Java RpcClient's default for v2 URLs). */
    V2_VER2_CRC(BoltProtocol.PROTOCOL_V2, BoltProtocol.VER1_2, true);

    private final int protocol;
    private final int ver1;
    private final boolean crc;

    BoltFraming(int protocol, int ver1, boolean crc) {
        this.protocol = protocol;
        this.ver1 = ver1;
        this.crc = crc;
    }

    /** Protocol code: 1 or 2. */
    public int protocol() {
        return protocol;
    }

    /** ver1 byte for v2; 0 for v1 (which has no such byte). */
    public int ver1() {
        return ver1;
    }

    /** Whether RPC frames in this framing carry a CRC32 trailer (switch bit 0 set). */
    public boolean crc() {
        return crc;
    }

    /** The switch byte RPC frames of this framing carry (0 for v1, which has no switch byte). */
    public int switchByte() {
        return crc ? BoltProtocol.SWITCH_CRC : 0;
    }

    /**
     * The framing of a frame with these header fields. For v1, {@code ver1} and {@code switchByte}
     * are ignored; a v2 frame with ver1 1 is {@link #V2_VER1} whatever its switch.
     *
     * @throws IllegalArgumentException for a protocol code other than 1/2 or a v2 ver1 other than 1/2
     */
    public static BoltFraming of(int protocol, int ver1, int switchByte) {
        if (protocol == BoltProtocol.PROTOCOL_V1) {
            return V1;
        }
        if (protocol == BoltProtocol.PROTOCOL_V2) {
            if (ver1 == BoltProtocol.VER1_1) {
                return V2_VER1;
            }
            if (ver1 == BoltProtocol.VER1_2) {
                return (switchByte & BoltProtocol.SWITCH_CRC) != 0 ? V2_VER2_CRC : V2_VER2;
            }
            throw new IllegalArgumentException("unknown bolt v2 ver1: " + ver1);
        }
        throw new IllegalArgumentException("unknown bolt protocol code: " + protocol);
    }
}
