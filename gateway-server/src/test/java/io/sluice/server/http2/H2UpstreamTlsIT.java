package io.sluice.server.http2;

import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsServerCredentials;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.core.config.UpstreamProtocol;
import io.sluice.core.config.UpstreamTlsConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.TestPki;
import io.sluice.server.testing.TlsHttpServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code upstream_protocol: h2}: gRPC calls from a plaintext grpc-java client through the gateway to a
 * grpc-java server over TLS (ALPN h2, the cluster's {@code tls} block verifying the server's
 * certificate from a test CA); a TLS peer that does not select h2 is a 502 / UNAVAILABLE naming why.
 */
class H2UpstreamTlsIT {

    static final Metadata.Key<String> DETAIL = Metadata.Key.of("x-detail", Metadata.ASCII_STRING_MARSHALLER);

    @TempDir
    Path dir;

    private static Gateway gateway(int port, UpstreamTlsConfig tls) {
        ClusterConfig c = ClusterConfig.builder().name("grpc-tls").hosts(new HostConfig("127.0.0.1", port, 1))
                .upstreamProtocol(UpstreamProtocol.H2).tls(tls).build();
        return GatewayFixture.start(GatewayConfig.builder()
                .listeners(ListenerConfig.builder().name("web").routes(RouteConfig.to("grpc-tls")).build())
                .clusters(c).admin(AdminConfig.disabled())
                .transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                .drainTimeout(Duration.ofSeconds(2)).build());
    }

    @Test
    void grpcCallsReachAGrpcServerOverTlsWithAlpnH2() throws Exception {
        TestPki pki = TestPki.create(dir, "up");
        TestPki.Leaf leaf = pki.leaf("server", "localhost", "127.0.0.1");
        ServerServiceDefinition svc = ServerServiceDefinition.builder("test.Echo")
                .addMethod(GrpcBytes.unary("test.Echo/Unary"), ServerCalls.asyncUnaryCall((req, out) -> {
                    out.onNext(req);
                    out.onCompleted();
                }))
                .addMethod(GrpcBytes.unary("test.Echo/Fail"), ServerCalls.asyncUnaryCall((req, out) -> {
                    Metadata t = new Metadata();
                    t.put(DETAIL, "abc");
                    out.onError(Status.NOT_FOUND.withDescription("no such thing").asRuntimeException(t));
                }))
                .build();
        Server server = io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0),
                        TlsServerCredentials.create(leaf.certFile().toFile(), leaf.keyFile().toFile()))
                .addService(svc).build().start();
        ManagedChannel ch = null;
        try (Gateway gw = gateway(server.getPort(), UpstreamTlsConfig.builder().caFile(pki.caFile().toString()).build())) {
            ch = Grpc.newChannelBuilderForAddress("127.0.0.1", gw.port("web"), InsecureChannelCredentials.create()).build();
            for (int i = 0; i < 3; i++) {
                byte[] out = ClientCalls.blockingUnaryCall(ch, GrpcBytes.unary("test.Echo/Unary"),
                        CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), new byte[] {7, (byte) i});
                assertThat(out).containsExactly(7, i);
            }
            ManagedChannel c = ch;
            assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(c, GrpcBytes.unary("test.Echo/Fail"),
                    CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), new byte[] {1}))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
                        assertThat(e.getStatus().getDescription()).isEqualTo("no such thing");
                        assertThat(e.getTrailers().get(DETAIL)).isEqualTo("abc");
                    });
            // one multiplexed TLS connection carried them all
            assertThat(gw.meterRegistry().get("sluice.upstream.h2.connections").tag("cluster", "grpc-tls").gauge().value())
                    .isEqualTo(1.0);
        } finally {
            if (ch != null) {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void aTlsPeerThatDoesNotSelectH2IsA502NamingWhy() throws Exception {
        TestPki pki = TestPki.create(dir, "up");
        ManagedChannel ch = null;
        try (TlsHttpServer http1 = TlsHttpServer.start(pki.leaf("server", "localhost", "127.0.0.1"), null);
             Gateway gw = gateway(http1.port(), UpstreamTlsConfig.builder().caFile(pki.caFile().toString()).build())) {
            ch = Grpc.newChannelBuilderForAddress("127.0.0.1", gw.port("web"), InsecureChannelCredentials.create()).build();
            ManagedChannel c = ch;
            assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(c, GrpcBytes.unary("test.Echo/Unary"),
                    CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), new byte[] {1}))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                        assertThat(e.getStatus().getDescription()).contains("did not negotiate HTTP/2 over TLS");
                    });
            assertThat(http1.requests()).isZero(); // nothing was sent to it in HTTP/2 or clear text
        } finally {
            if (ch != null) {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void anUntrustedCertificateIsA502NamingTheTlsFailure() throws Exception {
        TestPki pki = TestPki.create(dir, "up");
        TestPki other = TestPki.create(dir, "other");
        TestPki.Leaf leaf = pki.leaf("server", "localhost", "127.0.0.1");
        Server server = io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0),
                        TlsServerCredentials.create(leaf.certFile().toFile(), leaf.keyFile().toFile()))
                .addService(ServerServiceDefinition.builder("test.Echo").addMethod(GrpcBytes.unary("test.Echo/Unary"),
                        ServerCalls.asyncUnaryCall((req, out) -> {
                            out.onNext(req);
                            out.onCompleted();
                        })).build()).build().start();
        ManagedChannel ch = null;
        try (Gateway gw = gateway(server.getPort(), UpstreamTlsConfig.builder().caFile(other.caFile().toString()).build())) {
            ch = Grpc.newChannelBuilderForAddress("127.0.0.1", gw.port("web"), InsecureChannelCredentials.create()).build();
            ManagedChannel c = ch;
            assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(c, GrpcBytes.unary("test.Echo/Unary"),
                    CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), new byte[] {1}))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                        assertThat(e.getStatus().getDescription()).contains("TLS handshake with upstream");
                    });
        } finally {
            if (ch != null) {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
