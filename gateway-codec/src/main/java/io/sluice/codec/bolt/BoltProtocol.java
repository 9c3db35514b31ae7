package io.sluice.codec.bolt;

/**
 * Wire constants of the SOFA Bolt protocol as bolt 1.6.12 writes it ({@code RpcProtocol} v1,
 * {@code RpcProtocolV2} v2); {@link BoltFrameDecoder} draws the frame layouts.
 * All multi-byte integers on the wire are big-endian.
 */
public final class BoltProtocol {

    /** Protocol code of {@code RpcProtocol} ("v1"). */
    public static final int PROTOCOL_V1 = 1;
    /** Protocol code of {@code RpcProtocolV2} ("v2"). */
    public static final int PROTOCOL_V2 = 2;

    /** v2 {@code ver1}: v1 semantics, never a CRC trailer. */
    public static final int VER1_1 = 1;
    /** v2 {@code ver1}: a CRC32 trailer follows the content when switch bit 0 is set. */
    public static final int VER1_2 = 2;

    /** Switch byte bit 0: CRC32 trailer (only honoured with {@code ver1 == 2}). */
    public static final int SWITCH_CRC = 0x01;

    /** Command code of heartbeat requests and their acks. */
    public static final int CMD_HEARTBEAT = 0;
    /** Command code of RPC requests (type request or oneway). */
    public static final int CMD_RPC_REQUEST = 1;
    /** Command code of RPC responses. */
    public static final int CMD_RPC_RESPONSE = 2;

    /** The command version ({@code ver2}) every known peer writes. */
    public static final int VER2 = 1;

    /** Serializer id of Hessian2, the only one the bolt library itself knows. */
    public static final int CODEC_HESSIAN2 = 1;

    /** Request timeout field value meaning "none" (heartbeats, oneway). */
    public static final int NO_TIMEOUT = -1;

    /** Fixed header sizes. */
    public static final int V1_REQUEST_HEADER_LENGTH = 22;
    public static final int V1_RESPONSE_HEADER_LENGTH = 20;
    public static final int V2_REQUEST_HEADER_LENGTH = 24;
    public static final int V2_RESPONSE_HEADER_LENGTH = 22;

    /** Offsets of the request id inside a frame. */
    public static final int V1_REQUEST_ID_OFFSET = 5;
    public static final int V2_REQUEST_ID_OFFSET = 6;

    /** Size of the CRC32 trailer. */
    public static final int CRC_LENGTH = 4;

    /** SOFARPC header keys used for routing, in the order the proxy consults them. */
    public static final String HEADER_SERVICE = "service";
    public static final String HEADER_TARGET_SERVICE = "sofa_head_target_service";
    public static final String HEADER_METHOD_NAME = "sofa_head_method_name";

    /** SOFARPC request class name (what sofaload sends). */
    public static final String SOFA_REQUEST_CLASS = "com.alipay.sofa.rpc.core.request.SofaRequest";

    private BoltProtocol() {
    }

    /** Fixed header size of a frame with the given protocol code and command type code. */
    static int headerLength(int protocol, int type) {
        boolean response = type == BoltType.RESPONSE.code();
        if (protocol == PROTOCOL_V1) {
            return response ? V1_RESPONSE_HEADER_LENGTH : V1_REQUEST_HEADER_LENGTH;
        }
        return response ? V2_RESPONSE_HEADER_LENGTH : V2_REQUEST_HEADER_LENGTH;
    }

    /** Whether a v2 frame with this ver1 and switch byte carries a CRC32 trailer. */
    static boolean hasCrc(int protocol, int ver1, int switchByte) {
        return protocol == PROTOCOL_V2 && ver1 == VER1_2 && (switchByte & SWITCH_CRC) != 0;
    }
}
