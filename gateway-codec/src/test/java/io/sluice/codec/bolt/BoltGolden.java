package io.sluice.codec.bolt;

/** Golden frames captured on the wire from bolt 1.6.12 ({@code RpcClient}, {@code RpcServer}) and from sofaload. */
final class BoltGolden {

    /** v1 heartbeat, id 42. */
    static final byte[] V1_HEARTBEAT = Wire.of().hex("01 01 0000 01 0000002a 01 ffffffff 0000 0000 00000000").bytes();
    /** its ack. */
    static final byte[] V1_HEARTBEAT_ACK = Wire.of().hex("01 00 0000 01 0000002a 01 0000 0000 0000 00000000").bytes();
    /** v2/ver1=1 heartbeat, id 43. */
    static final byte[] V2_HEARTBEAT = Wire.of().hex("02 01 01 0000 01 0000002b 01 00 ffffffff 0000 0000 00000000").bytes();
    /** its ack. */
    static final byte[] V2_HEARTBEAT_ACK = Wire.of().hex("02 01 00 0000 01 0000002b 01 00 0000 0000 0000 00000000").bytes();
    /** RpcClient.oneway("cap"), v1, id 2003. */
    static final byte[] V1_ONEWAY = Wire.of().hex("01 02 0001 01 000007d3 01 ffffffff 0010 0000 00000004")
            .ascii("java.lang.String").hex("03 63 61 70").bytes();
    /** the same over v2, ver1 2, CRC switch on, id 2004. */
    static final byte[] V2_CRC_ONEWAY = Wire.of().hex("02 02 02 0001 01 000007d4 01 01 ffffffff 0010 0000 00000004")
            .ascii("java.lang.String").hex("03636170 3c38a0d0").bytes();
    /** hand-built v1 request, id 7, Hessian2 "hi". */
    static final byte[] V1_REQUEST = Wire.of().hex("01 01 0001 01 00000007 01 00000bb8 0010 0000 00000003")
            .ascii("java.lang.String").hex("026869").bytes();
    /** the server's response "echo:hi". */
    static final byte[] V1_RESPONSE = Wire.of().hex("01 00 0002 01 00000007 01 0000 0010 0000 00000008")
            .ascii("java.lang.String").hex("07").ascii("echo:hi").bytes();
    /** sofaload's request layout, id 1 (content shortened to a marker; header exactly as sent). */
    static final byte[] SOFALOAD_REQUEST = Wire.of().hex("01 01 0001 01 00000001 01 00001388 002c 002e 00000005")
            .ascii("com.alipay.sofa.rpc.core.request.SofaRequest")
            .hex("00000007").ascii("service").hex("0000001f").ascii("com.alipay.test.TestService:1.0")
            .hex("4f 01 02 03 04").bytes();

    private BoltGolden() {
    }
}
