package io.sluice.server.bolt;

import io.sluice.codec.bolt.BoltFraming;
import io.sluice.codec.bolt.BoltStatus;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.LbPolicy;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An upstream that answers a request with an error status and no body: the gateway gives the answer
 * a body (bolt clients need one) and must send it on the request id of the client's request, not
 * the id the upstream saw. Two requests are in flight on one client connection, the upstream
 * answers the second first, so a mix-up of ids shows.
 */
class BoltUpstreamErrorIT {

    @Test
    void anUpstreamErrorWithoutABodyReachesTheClientOnItsOwnRequestId() throws Exception {
        try (ScriptedUpstream up = ScriptedUpstream.start();
             Gateway g = GatewayFixture.start(config(up.port()));
             RawBolt raw = new RawBolt(g.port("bolt"))) {
            raw.write(RawBolt.stringRequest(BoltFraming.V1, 101, "java.lang.String", Map.of(), "hold"));
            raw.write(RawBolt.stringRequest(BoltFraming.V1, 102, "java.lang.String", Map.of(), "fail"));

            RawBolt.Response first = raw.read();
            RawBolt.Response second = raw.read();

            assertThat(first.id()).as("the failed request's own id").isEqualTo(102);
            assertThat(first.status()).isEqualTo(BoltStatus.SERVER_THREADPOOL_BUSY);
            assertThat(first.text()).contains("upstream 127.0.0.1:" + up.port() + " answered SERVER_THREADPOOL_BUSY");
            assertThat(second.id()).isEqualTo(101);
            assertThat(second.status()).isEqualTo(BoltStatus.SUCCESS);
            assertThat(second.text()).endsWith("ok:hold");
            // the upstream saw the gateway's ids: the client's had to be restored on both answers
            assertThat(up.upstreamIds()).hasSize(2).doesNotContain(101, 102);
        }
    }

    private static GatewayConfig config(int upstreamPort) {
        ClusterConfig up = new ClusterConfig("up", Protocol.BOLT, LbPolicy.ROUND_ROBIN,
                List.of(new HostConfig("127.0.0.1", upstreamPort, 1)), Duration.ofSeconds(2), Duration.ofSeconds(10),
                null, null, null, null, 50, false, 2, 1.0);
        ListenerConfig bolt = new ListenerConfig("bolt", Protocol.BOLT, "127.0.0.1", 0, List.of(), null,
                new BoltOptions(4 << 20, Duration.ofSeconds(90), "up"));
        // one event loop: one upstream connection carries both requests
        return new GatewayConfig(List.of(bolt), List.of(up), AdminConfig.disabled(), new TransportConfig("auto", 1, 128),
                Duration.ofSeconds(5));
    }

    /**
     * A Bolt v1 server on plain sockets: answers heartbeats; holds RPC requests until two have
     * arrived, then answers {@code "fail"} with SERVER_THREADPOOL_BUSY and an empty body, and
     * {@code "hold"} with SUCCESS and {@code "ok:hold"}.
     */
    private static final class ScriptedUpstream implements AutoCloseable {
        private final ServerSocket server;
        private final List<Socket> sockets = new ArrayList<>();
        private final List<Object[]> held = new ArrayList<>(); // {DataOutputStream, id, text}
        private final List<Integer> ids = new ArrayList<>();

        private ScriptedUpstream() throws IOException {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        }

        static ScriptedUpstream start() throws IOException {
            ScriptedUpstream s = new ScriptedUpstream();
            Thread t = new Thread(s::accept, "scripted-bolt-upstream");
            t.setDaemon(true);
            t.start();
            return s;
        }

        int port() {
            return server.getLocalPort();
        }

        List<Integer> upstreamIds() {
            synchronized (held) {
                return List.copyOf(ids);
            }
        }

        private void accept() {
            try {
                while (true) {
                    Socket s = server.accept();
                    synchronized (sockets) {
                        sockets.add(s);
                    }
                    Thread t = new Thread(() -> serve(s), "scripted-bolt-connection");
                    t.setDaemon(true);
                    t.start();
                }
            } catch (IOException closed) {
                // closed by the test
            }
        }

        private void serve(Socket s) {
            try (s) {
                DataInputStream in = new DataInputStream(s.getInputStream());
                DataOutputStream out = new DataOutputStream(s.getOutputStream());
                while (true) {
                    if (in.readUnsignedByte() != 1) {
                        throw new IOException("not bolt v1");
                    }
                    in.readUnsignedByte(); // type
                    int cmd = in.readUnsignedShort();
                    in.readUnsignedByte(); // ver2
                    int id = in.readInt();
                    in.readUnsignedByte(); // codec
                    in.readInt(); // timeout
                    int classLen = in.readUnsignedShort();
                    int headerLen = in.readUnsignedShort();
                    int contentLen = in.readInt();
                    in.skipNBytes(classLen + headerLen);
                    byte[] content = in.readNBytes(contentLen);
                    if (cmd == 0) { // heartbeat
                        respond(out, 0, id, BoltStatus.SUCCESS, new byte[0], new byte[0]);
                        continue;
                    }
                    String text = new String(content, 1, content.length - 1, StandardCharsets.US_ASCII);
                    List<Object[]> ready = null;
                    synchronized (held) {
                        ids.add(id);
                        held.add(new Object[] {out, id, text});
                        if (held.size() == 2) {
                            ready = new ArrayList<>(held);
                            ready.sort((a, b) -> "fail".equals(a[2]) ? -1 : "fail".equals(b[2]) ? 1 : 0);
                        }
                    }
                    if (ready != null) {
                        for (Object[] r : ready) {
                            DataOutputStream o = (DataOutputStream) r[0];
                            if ("fail".equals(r[2])) {
                                respond(o, 2, (Integer) r[1], BoltStatus.SERVER_THREADPOOL_BUSY, new byte[0], new byte[0]);
                            } else {
                                byte[] body = ("ok:" + r[2]).getBytes(StandardCharsets.US_ASCII);
                                byte[] hessian = new byte[body.length + 1];
                                hessian[0] = (byte) body.length; // Hessian2 compact string
                                System.arraycopy(body, 0, hessian, 1, body.length);
                                respond(o, 2, (Integer) r[1], BoltStatus.SUCCESS,
                                        "java.lang.String".getBytes(StandardCharsets.US_ASCII), hessian);
                            }
                        }
                    }
                }
            } catch (IOException e) {
                // the gateway closed the connection, or the test closed the server
            }
        }

        /** A v1 response: proto, type, cmd, ver2, id, codec, status, class/header/content lengths, then the bytes. */
        private static void respond(DataOutputStream out, int cmd, int id, int status, byte[] clazz, byte[] content)
                throws IOException {
            synchronized (out) {
                out.writeByte(1);
                out.writeByte(0);
                out.writeShort(cmd);
                out.writeByte(1);
                out.writeInt(id);
                out.writeByte(1);
                out.writeShort(status);
                out.writeShort(clazz.length);
                out.writeShort(0);
                out.writeInt(content.length);
                out.write(clazz);
                out.write(content);
                out.flush();
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
            synchronized (sockets) {
                for (Socket s : sockets) {
                    s.close();
                }
            }
        }
    }
}
