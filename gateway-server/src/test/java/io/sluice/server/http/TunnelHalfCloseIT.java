package io.sluice.server.http;

import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteRules;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.SocketServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A half-close goes through an upgraded connection: the client ends its output, the backend sees
 * the end of its input, and still answers over the other direction, which the client reads to
 * the end. An opt-in upgrade protocol ({@code raw}) on a plain-socket backend.
 */
@Timeout(30)
class TunnelHalfCloseIT {

    @Test
    void clientFinReachesTheBackendWhichStillAnswers() throws Exception {
        try (SocketServer backend = new SocketServer("raw-upgrade", 16, (s, i) -> {
            InputStream in = s.getInputStream();
            String head = readHead(in);
            OutputStream out = s.getOutputStream();
            if (!head.toLowerCase().contains("upgrade: raw")) {
                out.write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                return;
            }
            out.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: raw\r\nConnection: Upgrade\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            byte[] got = in.readAllBytes(); // until the client's FIN arrives through the gateway
            out.write(("got:" + new String(got, StandardCharsets.US_ASCII)).getBytes(StandardCharsets.US_ASCII));
            out.flush();
            s.close();
        })) {
            ClusterConfig c = ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", backend.port(), 1)));
            RouteConfig raw = RouteConfig.to("c").withRules(RouteRules.builder().upgrades(List.of("raw")).build());
            GatewayConfig config = GatewayConfig.builder().listeners(ListenerConfig.builder().name("web").routes(raw).build())
                    .clusters(c).admin(AdminConfig.disabled())
                    .transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                    .drainTimeout(Duration.ofSeconds(1)).build();
            try (Gateway g = Gateway.builder().config(config).random(new SplittableRandom(7))
                    .build().start().orTimeout(30, TimeUnit.SECONDS).join();
                 Socket s = new Socket("127.0.0.1", g.port("web"))) {
                s.setSoTimeout(10_000);
                OutputStream out = s.getOutputStream();
                out.write("GET /t HTTP/1.1\r\nHost: x\r\nUpgrade: raw\r\nConnection: Upgrade\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII));
                InputStream in = s.getInputStream();
                String head = readHead(in);
                assertThat(head).startsWith("HTTP/1.1 101 ").contains("Upgrade: raw");
                out.write("hello".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                s.shutdownOutput();
                assertThat(new String(in.readAllBytes(), StandardCharsets.US_ASCII)).isEqualTo("got:hello");
            }
        }
    }

    /** A whole head, up to and including its blank line. */
    private static String readHead(InputStream in) throws java.io.IOException {
        StringBuilder sb = new StringBuilder();
        int c;
        while (!sb.toString().endsWith("\r\n\r\n") && (c = in.read()) >= 0) {
            sb.append((char) c);
        }
        return sb.toString();
    }
}
