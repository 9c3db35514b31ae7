package io.sluice.bench.ws;

import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteRules;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The WebSocket benchmark's client and echo backend, directly and through the gateway's upgrade tunnel. */
@Timeout(60)
class WsLoadIT {

    private static Gateway gateway(int backendPort, RouteRules rules) {
        RouteConfig route = RouteConfig.to("c");
        if (rules != null) {
            route = route.withRules(rules);
        }
        return Gateway.builder().config(new GatewayConfig(
                        List.of(ListenerConfig.http("web", "127.0.0.1", 0, List.of(route))),
                        List.of(ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", backendPort, 1)))),
                        AdminConfig.disabled(), new TransportConfig("auto", 1, 128), Duration.ofSeconds(1)))
                .build().start().orTimeout(30, TimeUnit.SECONDS).join();
    }

    private static String report(WsLoad.Options o, WsLoad.Result r) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        WsLoad.print(o, r, new PrintStream(buf, true, StandardCharsets.UTF_8));
        return buf.toString(StandardCharsets.UTF_8);
    }

    @Test
    void echoesBinaryMessagesDirectlyWithManyInFlight() throws Exception {
        try (WsEcho echo = WsEcho.start("127.0.0.1", 0, "/ws", 1)) {
            WsLoad.Options o = WsLoad.parse(new String[] {"-c", "4", "-t", "2", "-m", "8", "-s", "1024", "-d", "1s",
                "-w", "200ms", "ws://127.0.0.1:" + echo.port() + "/ws"});
            WsLoad.Result r = WsLoad.run(o);
            assertThat(r.messages()).isGreaterThan(100);
            assertThat(r.errors()).isZero();
            assertThat(r.latency().count()).isEqualTo(r.messages());
            assertThat(r.echoed()).isGreaterThan(r.messages()); // the warm-up's echoes too
            // every echo is a 1 KiB message plus its frame header: the bytes read cover them
            assertThat(r.bytesRead()).isGreaterThan(r.messages() * 1024);
            assertThat(report(o, r)).contains("2 threads and 4 connections, 8 messages in flight each, 1024-byte binary messages",
                    "99%", r.messages() + " messages in", r.echoed() + " messages echoed in all", "Messages/sec:").doesNotContain("Errors:");
        }
    }

    @Test
    void textMessagesTravelThroughTheGatewaysUpgradeTunnel() throws Exception {
        try (WsEcho echo = WsEcho.start("127.0.0.1", 0, "/ws", 1);
             Gateway gw = gateway(echo.port(), null)) {
            WsLoad.Options o = WsLoad.parse(new String[] {"-c", "3", "-t", "1", "--text", "-d", "1s",
                "ws://127.0.0.1:" + gw.port("web") + "/ws"});
            WsLoad.Result r = WsLoad.run(o);
            assertThat(r.messages()).isGreaterThan(50);
            assertThat(r.errors()).isZero();
            assertThat(report(o, r)).contains("1 message in flight each, 1024-byte text messages");
        }
    }

    @Test
    void aRouteWithoutUpgradesCountsHandshakeErrors() throws Exception {
        // the gateway forwards the request without Upgrade; the echo server answers 400: no 101, no messages
        try (WsEcho echo = WsEcho.start("127.0.0.1", 0, "/ws", 1);
             Gateway gw = gateway(echo.port(), RouteRules.builder().upgrades(List.of()).build())) {
            WsLoad.Options o = WsLoad.parse(new String[] {"-c", "2", "-d", "500ms", "--timeout", "500ms",
                "ws://127.0.0.1:" + gw.port("web") + "/ws"});
            WsLoad.Result r = WsLoad.run(o);
            assertThat(r.messages()).isZero();
            assertThat(r.handshakeErrors()).isPositive();
            assertThat(report(o, r)).contains("Errors: handshake");
        }
    }

    @Test
    void rejectsBadArguments() {
        assertThatThrownBy(() -> WsLoad.parse(new String[] {"-c", "1"})).hasMessageContaining("ws:// URL");
        assertThatThrownBy(() -> WsLoad.parse(new String[] {"http://127.0.0.1:1/"})).hasMessageContaining("ws://");
        assertThatThrownBy(() -> WsLoad.parse(new String[] {"-m", "0", "ws://127.0.0.1:1/ws"}))
                .hasMessageContaining("at least 1");
    }
}
