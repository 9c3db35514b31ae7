package io.sluice.codec.bolt;

import com.alipay.remoting.Connection;
import com.alipay.remoting.ProtocolCode;
import com.alipay.remoting.ResponseStatus;
import com.alipay.remoting.config.switches.ProtocolSwitch;
import com.alipay.remoting.exception.CodecException;
import com.alipay.remoting.exception.ConnectionClosedException;
import com.alipay.remoting.exception.DeserializationException;
import com.alipay.remoting.exception.SerializationException;
import com.alipay.remoting.rpc.HeartbeatAckCommand;
import com.alipay.remoting.rpc.HeartbeatCommand;
import com.alipay.remoting.rpc.RpcCodec;
import com.alipay.remoting.rpc.RpcCommandFactory;
import com.alipay.remoting.rpc.RpcResponseResolver;
import com.alipay.remoting.rpc.exception.InvokeException;
import com.alipay.remoting.rpc.exception.InvokeSendFailedException;
import com.alipay.remoting.rpc.exception.InvokeServerBusyException;
import com.alipay.remoting.rpc.exception.InvokeServerException;
import com.alipay.remoting.rpc.exception.InvokeTimeoutException;
import com.alipay.remoting.rpc.protocol.RpcProtocolManager;
import com.alipay.remoting.rpc.protocol.RpcRequestCommand;
import com.alipay.remoting.rpc.protocol.RpcResponseCommand;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.codec.testing.Bufs;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.Serializable;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The real bolt library (1.6.12, its Netty 4.1-compiled codec running on our Netty 4.2) as the
 * judge: its encoder produces the request bytes our decoder must read, and its decoder plus
 * {@code RpcResponseResolver} (exactly what {@code RpcClient} runs on a response) must accept the
 * frames we build and raise the exception matching each status.
 */
class BoltInteropTest {

    private static final ByteBufAllocator ALLOC = Bufs.ALLOC;
    private static final String ADDR = "127.0.0.1:12200";

    @BeforeAll
    static void registerBoltProtocols() {
        RpcProtocolManager.initProtocols();
    }

    @ParameterizedTest
    @EnumSource(BoltFraming.class)
    void boltEncodedRequestDecodesAndSurvivesAnIdRewriteBackIntoBolt(BoltFraming framing) throws Exception {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("service", "com.foo.HelloService:1.0");
        headers.put("sofa_head_method_name", "sayHello");
        headers.put("sofa_head_target_service", "com.foo.HelloService:1.0");
        RpcRequestCommand cmd = new RpcCommandFactory().createRequestCommand("hello bolt");
        cmd.setRequestClass(String.class.getName());
        cmd.setTimeout(3000);
        if (framing.crc()) {
            cmd.setProtocolSwitch(ProtocolSwitch.create(new int[] {ProtocolSwitch.CRC_SWITCH_INDEX}));
        }
        cmd.serialize();
        ByteBuf header = Bufs.heap(256);
        BoltHeaders.encode(headers, header);
        cmd.setHeader(Wire.bytesOf(header));
        header.release();

        byte[] wire = boltEncode(framing, cmd);

        BoltFrame frame = BoltFrameTest.decode(wire);
        assertThat(frame.framing()).isEqualTo(framing);
        assertThat(frame.type()).isEqualTo(BoltType.REQUEST);
        assertThat(frame.cmdCode()).isEqualTo(BoltProtocol.CMD_RPC_REQUEST);
        assertThat(frame.requestId()).isEqualTo(cmd.getId());
        assertThat(frame.timeoutMillis()).isEqualTo(3000);
        assertThat(frame.codec()).isEqualTo(BoltProtocol.CODEC_HESSIAN2);
        assertThat(frame.className()).isEqualTo("java.lang.String");
        assertThat(frame.service()).isEqualTo("com.foo.HelloService:1.0");
        assertThat(frame.methodName()).isEqualTo("sayHello");
        assertThat(frame.targetService()).isEqualTo("com.foo.HelloService:1.0");
        assertThat(Wire.bytesOf(frame.contentBytes())).isEqualTo(cmd.getContent());

        // the proxy path: new id in place (CRC recomputed), then bolt must accept the bytes
        frame.rewriteRequestId(cmd.getId() + 1000);
        Object decoded = boltDecode(bytesAndRelease(frame));
        assertThat(decoded).isInstanceOf(RpcRequestCommand.class);
        RpcRequestCommand back = (RpcRequestCommand) decoded;
        assertThat(back.getId()).isEqualTo(cmd.getId() + 1000);
        back.deserialize();
        assertThat(back.getRequestObject()).isEqualTo("hello bolt");
    }

    @ParameterizedTest
    @EnumSource(BoltFraming.class)
    void boltClientRaisesTheMatchingExceptionForEveryGatewayError(BoltFraming framing) throws Exception {
        Map<Integer, Class<? extends Throwable>> expected = new LinkedHashMap<>();
        expected.put(BoltStatus.ERROR, InvokeException.class);
        expected.put(BoltStatus.SERVER_EXCEPTION, InvokeServerException.class);
        expected.put(BoltStatus.UNKNOWN, InvokeException.class);
        expected.put(BoltStatus.SERVER_THREADPOOL_BUSY, InvokeServerBusyException.class);
        expected.put(BoltStatus.ERROR_COMM, InvokeException.class);
        expected.put(BoltStatus.NO_PROCESSOR, InvokeException.class);
        expected.put(BoltStatus.TIMEOUT, InvokeTimeoutException.class);
        expected.put(BoltStatus.CLIENT_SEND_ERROR, InvokeSendFailedException.class);
        expected.put(BoltStatus.CODEC_EXCEPTION, CodecException.class);
        expected.put(BoltStatus.CONNECTION_CLOSED, ConnectionClosedException.class);
        expected.put(BoltStatus.SERVER_SERIAL_EXCEPTION, SerializationException.class);
        expected.put(BoltStatus.SERVER_DESERIAL_EXCEPTION, DeserializationException.class);
        assertThat(expected.keySet()).containsExactlyInAnyOrder(
                Arrays.stream(BoltFramesTest.definedErrorStatuses()).boxed().toArray(Integer[]::new));

        for (Map.Entry<Integer, Class<? extends Throwable>> e : expected.entrySet()) {
            int status = e.getKey();
            String message = "sluice: " + BoltStatus.name(status) + (status % 2 == 0 ? " with a longer detail text" : "");
            byte[] wire = bytesAndRelease(BoltFrames.errorResponse(ALLOC, framing, 4242, status, message));

            Object decoded = boltDecode(wire);
            assertThat(decoded).isInstanceOf(RpcResponseCommand.class);
            RpcResponseCommand cmd = (RpcResponseCommand) decoded;
            assertThat(cmd.getId()).isEqualTo(4242);
            assertThat(cmd.getResponseStatus().getValue()).isEqualTo((short) status);

            Throwable thrown = catchThrowable(() -> RpcResponseResolver.resolveResponseObject(cmd, ADDR));
            assertThat(thrown).as("status %s in %s", BoltStatus.name(status), framing)
                    .isExactlyInstanceOf(e.getValue());
            // and the body is a readable Hessian2 string for bolt (what SERVER_* statuses deserialize)
            cmd.deserialize();
            assertThat(cmd.getResponseObject()).isEqualTo(message);
        }
    }

    @ParameterizedTest
    @EnumSource(BoltFraming.class)
    void boltAcceptsOurHeartbeatsAndAcks(BoltFraming framing) throws Exception {
        Object decoded = boltDecode(bytesAndRelease(BoltFrames.heartbeat(ALLOC, framing, 77)));
        assertThat(decoded).isInstanceOf(HeartbeatCommand.class);
        assertThat(((HeartbeatCommand) decoded).getId()).isEqualTo(77);

        decoded = boltDecode(bytesAndRelease(BoltFrames.heartbeatAck(ALLOC, framing, 77)));
        assertThat(decoded).isInstanceOf(HeartbeatAckCommand.class);
        assertThat(((HeartbeatAckCommand) decoded).getId()).isEqualTo(77);
        assertThat(((HeartbeatAckCommand) decoded).getResponseStatus()).isEqualTo(ResponseStatus.SUCCESS);
    }

    @ParameterizedTest
    @EnumSource(BoltFraming.class)
    void boltEncodedHeartbeatDecodes(BoltFraming framing) throws Exception {
        HeartbeatCommand cmd = new HeartbeatCommand();
        byte[] wire = boltEncode(framing, cmd);
        BoltFrame frame = BoltFrameTest.decode(wire);
        assertThat(frame.isHeartbeat()).isTrue();
        assertThat(frame.type()).isEqualTo(BoltType.REQUEST);
        assertThat(frame.requestId()).isEqualTo(cmd.getId());
        assertThat(frame.hasCrc()).isFalse();
        BoltFrame ack = BoltFrames.heartbeatAck(ALLOC, frame);
        frame.release();
        Object decoded = boltDecode(bytesAndRelease(ack));
        assertThat(decoded).isInstanceOf(HeartbeatAckCommand.class);
        assertThat(((HeartbeatAckCommand) decoded).getId()).isEqualTo(cmd.getId());
    }

    /** Runs bolt's own encoder, with the channel pinned to {@code framing} as bolt pins it. */
    private static byte[] boltEncode(BoltFraming framing, Serializable cmd) {
        EmbeddedChannel ch = new EmbeddedChannel(new RpcCodec().newEncoder());
        ch.attr(Connection.PROTOCOL).set(ProtocolCode.fromBytes((byte) framing.protocol()));
        if (framing.protocol() == BoltProtocol.PROTOCOL_V2) {
            ch.attr(Connection.VERSION).set((byte) framing.ver1());
        }
        ch.writeOutbound(cmd);
        ByteBuf out = ch.readOutbound();
        byte[] bytes = Wire.bytesOf(out);
        out.release();
        assertThat(ch.finishAndReleaseAll()).isFalse();
        return bytes;
    }

    private static byte[] bytesAndRelease(BoltFrame frame) {
        try {
            return Wire.bytesOf(frame.content());
        } finally {
            frame.release();
        }
    }

    /**
     * Runs bolt's own decoder (what RpcClient and RpcServer use) on one frame. Bolt's response
     * decoding casts the remote address to {@link InetSocketAddress}, so the channel gets one.
     */
    private static Object boltDecode(byte[] wire) {
        EmbeddedChannel ch = new EmbeddedChannel() {
            @Override
            protected SocketAddress remoteAddress0() {
                return new InetSocketAddress("127.0.0.1", 12200);
            }
        };
        ch.pipeline().addLast(new RpcCodec().newDecoder());
        ch.writeInbound(Bufs.copied(wire));
        Object decoded = ch.readInbound();
        assertThat((Object) ch.readInbound()).isNull();
        ch.checkException();
        ch.finishAndReleaseAll();
        return decoded;
    }
}
