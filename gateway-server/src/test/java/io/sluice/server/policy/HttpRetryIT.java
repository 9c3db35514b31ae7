package io.sluice.server.policy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.CircuitBreakerConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RetryOn;
import io.sluice.core.config.RetryPolicyConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.Ports;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Retries, the retry budget and the circuit breakers end to end: a real gateway on loopback, real
 * backends on sockets ({@link ScriptedBackend}) and the JDK {@link HttpClient}.
 */
@Timeout(60)
class HttpRetryIT {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final List<AutoCloseable> closing = new ArrayList<>();
    private Gateway gw;

    @AfterEach
    void tearDown() throws Exception {
        if (gw != null) {
            gw.close();
        }
        for (AutoCloseable c : closing) {
            c.close();
        }
    }

    private ScriptedBackend backend(ScriptedBackend.Script s) throws Exception {
        ScriptedBackend b = new ScriptedBackend(s);
        closing.add(b);
        return b;
    }

    private void start(List<HostConfig> hosts, RetryPolicyConfig policy, CircuitBreakerConfig breakers) {
        ClusterConfig c = ClusterConfig.builder().name("c").hosts(hosts).circuitBreakers(breakers).build();
        ListenerConfig l = ListenerConfig.builder().name("web").routes(RouteConfig.to("c").withRetryPolicy(policy)).build();
        GatewayConfig config = GatewayConfig.builder().listeners(l).clusters(c).admin(AdminConfig.disabled())
                .transport(TransportConfig.builder().workerThreads(2).backlog(256).build())
                .drainTimeout(Duration.ofSeconds(1)).build();
        gw = Gateway.builder().config(config).meterRegistry(registry).random(new SplittableRandom(7))
                .build().start().orTimeout(30, TimeUnit.SECONDS).join();
    }

    private static HostConfig host(ScriptedBackend b) {
        return new HostConfig("127.0.0.1", b.port(), 1);
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + gw.port("web") + path);
    }

    private double retries(String outcome) {
        return registry.get("sluice.cluster.retries").tags("cluster", "c", "outcome", outcome).functionCounter().count();
    }

    private double remaining(String resource) {
        return registry.get("sluice.cluster.breaker.remaining").tags("cluster", "c", "resource", resource).gauge().value();
    }

    private HttpRequest put(byte[] body) {
        return HttpRequest.newBuilder(uri("/doc")).timeout(Duration.ofSeconds(20))
                .PUT(HttpRequest.BodyPublishers.ofByteArray(body)).build();
    }

    private HttpRequest get() {
        return HttpRequest.newBuilder(uri("/x")).timeout(Duration.ofSeconds(20)).GET().build();
    }

    /** Sends {@code total} requests, {@code concurrency} at a time; returns the responses. */
    private List<HttpResponse<String>> load(int total, int concurrency, java.util.function.IntFunction<HttpRequest> req) {
        List<HttpResponse<String>> out = new ArrayList<>();
        for (int sent = 0; sent < total; ) {
            List<CompletableFuture<HttpResponse<String>>> batch = new ArrayList<>();
            for (int i = 0; i < concurrency && sent < total; i++, sent++) {
                batch.add(client.sendAsync(req.apply(sent), HttpResponse.BodyHandlers.ofString()));
            }
            for (CompletableFuture<HttpResponse<String>> f : batch) {
                out.add(f.join());
            }
        }
        return out;
    }

    /** {@code workers} clients each sending {@code each} GETs one after the other (a steady load). */
    private List<HttpResponse<String>> closedLoop(int workers, int each) {
        List<CompletableFuture<List<HttpResponse<String>>>> all = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            CompletableFuture<List<HttpResponse<String>>> chain = CompletableFuture.completedFuture(new ArrayList<>());
            for (int i = 0; i < each; i++) {
                chain = chain.thenCompose(list -> client.sendAsync(get(), HttpResponse.BodyHandlers.ofString())
                        .thenApply(r -> {
                            list.add(r);
                            return list;
                        }));
            }
            all.add(chain);
        }
        List<HttpResponse<String>> out = new ArrayList<>();
        all.forEach(f -> out.addAll(f.join()));
        return out;
    }

    @Test
    void aBackendThatResetsEverySecondRequestCostsClientsNothing() throws Exception {
        // every second request on each backend connection is answered with a reset (RST)
        ScriptedBackend b = backend((onConnection, overall) ->
                onConnection % 2 == 1 ? ScriptedBackend.Action.RESET : ScriptedBackend.Action.ECHO_CRC);
        // 8 clients at once: up to 8 concurrent retries must be allowed (the budget's floor)
        start(List.of(host(b)), RetryPolicyConfig.builder().retryOn(RetryOn.RESET).numRetries(2).build(),
                CircuitBreakerConfig.builder().minRetryConcurrency(8).build());
        SplittableRandom rnd = new SplittableRandom(3);
        int total = 200;
        byte[][] bodies = new byte[total][];
        for (int i = 0; i < total; i++) {
            bodies[i] = new byte[1 + rnd.nextInt(8 * 1024)];
            rnd.nextBytes(bodies[i]);
        }
        List<HttpResponse<String>> rs = load(total, 8, i -> put(bodies[i]));
        for (int i = 0; i < total; i++) {
            assertThat(rs.get(i).statusCode()).as("request %d", i).isEqualTo(200);
            assertThat(rs.get(i).body()).as("the body the backend read, request %d", i)
                    .isEqualTo(ScriptedBackend.crc(bodies[i]));
        }
        int resets = b.resets.get();
        assertThat(resets).as("the backend did reset").isGreaterThan(10);
        assertThat(retries("retried")).isEqualTo(resets);
        assertThat(retries("success")).isEqualTo(resets);
        assertThat(b.requests.get()).isEqualTo(total + resets);
        assertThat(b.retriedHeaders.get()).as("retries carry x-sluice-attempt: 2").isEqualTo(resets);
    }

    @Test
    void aBackendThatFailsEverythingGetsNoMoreThanTheBudget() throws Exception {
        ScriptedBackend b = backend((onConnection, overall) -> ScriptedBackend.Action.STATUS_503);
        // the pure share (no floor): with the default floor of 3, a run's quiet tail may add a few retries
        start(List.of(host(b)), RetryPolicyConfig.builder().retryOn(RetryOn.FIVE_XX).numRetries(3).build(),
                CircuitBreakerConfig.builder().minRetryConcurrency(0).build());
        int total = 400;
        long t0 = System.nanoTime();
        List<HttpResponse<String>> rs = closedLoop(50, total / 50);
        long tookMs = (System.nanoTime() - t0) / 1_000_000;
        assertThat(rs).allSatisfy(r -> assertThat(r.statusCode()).isEqualTo(503));
        double budget = CircuitBreakerConfig.DEFAULT_BUDGET_PERCENT / 100;
        // The budget is a share of the requests active at each moment (Envoy's), so over a whole run the
        // total can pass (1 + budget) x requests by a little in the run's tail (484 of 400 seen once);
        // without a budget it would be up to 4x.
        assertThat(b.requests.get()).as("requests to the backend").isLessThanOrEqualTo((int) ((1 + budget + 0.05) * total));
        assertThat(retries("overflow")).as("retries refused by the budget").isPositive();
        assertThat(retries("retried")).isEqualTo(b.requests.get() - total);
        assertThat(tookMs).as("errors come back quickly").isLessThan(15_000);
    }

    @Test
    void tenTimesTheBreakersLimitFailsTheExcessFastAndTheBackendNeverSeesMore() throws Exception {
        ScriptedBackend b = backend((onConnection, overall) -> ScriptedBackend.Action.HOLD_THEN_ECHO);
        int limit = 10;
        start(List.of(host(b)), null, CircuitBreakerConfig.builder().maxRequests(limit).build());
        List<CompletableFuture<HttpResponse<String>>> fs = new ArrayList<>();
        for (int i = 0; i < 10 * limit; i++) {
            fs.add(client.sendAsync(get(), HttpResponse.BodyHandlers.ofString()));
        }
        List<HttpResponse<String>> shed = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (shed.size() < 9 * limit && System.nanoTime() < deadline) {
            shed.clear();
            for (CompletableFuture<HttpResponse<String>> f : fs) {
                if (f.isDone()) {
                    shed.add(f.join());
                }
            }
            Thread.onSpinWait();
        }
        assertThat(shed).hasSize(9 * limit).allSatisfy(r -> {
            assertThat(r.statusCode()).isEqualTo(503);
            assertThat(r.headers().firstValue("x-sluice-overloaded")).hasValue("true");
        });
        assertThat(b.peakInFlight.get()).as("the backend never sees more than the limit").isEqualTo(limit);
        assertThat(remaining("requests")).isZero();
        assertThat(registry.get("sluice.cluster.breaker.open").tags("cluster", "c", "resource", "requests").gauge().value())
                .isEqualTo(1);
        b.release.countDown();
        long ok = fs.stream().map(CompletableFuture::join).filter(r -> r.statusCode() == 200).count();
        assertThat(ok).isEqualTo(limit);
        assertThat(b.peakInFlight.get()).isEqualTo(limit);
        assertThat(remaining("requests")).isEqualTo(limit);
    }

    @Test
    void aBodyLargerThanTheReplayBufferIsNotRetriedAndNotCorrupted() throws Exception {
        ScriptedBackend b = backend((onConnection, overall) ->
                overall == 0 ? ScriptedBackend.Action.RESET : ScriptedBackend.Action.ECHO_CRC);
        start(List.of(host(b)), RetryPolicyConfig.builder().retryOn(RetryOn.RESET).numRetries(2).maxBodyBytes(1024).build(),
                null);
        byte[] body = new byte[4096];
        new SplittableRandom(5).nextBytes(body);
        HttpResponse<String> first = client.send(put(body), HttpResponse.BodyHandlers.ofString());
        assertThat(first.statusCode()).as("the reset reaches the client: not retried").isEqualTo(502);
        assertThat(b.requests.get()).isEqualTo(1);
        assertThat(retries("body_too_large")).isEqualTo(1);
        assertThat(retries("retried")).isZero();
        HttpResponse<String> second = client.send(put(body), HttpResponse.BodyHandlers.ofString());
        assertThat(second.statusCode()).isEqualTo(200);
        assertThat(second.body()).isEqualTo(ScriptedBackend.crc(body));
    }

    @Test
    void aDeadHostIsRetriedOnAnotherHostNeverTheSameOne() throws Exception {
        ScriptedBackend ok1 = backend((c, o) -> ScriptedBackend.Action.ECHO_CRC);
        ScriptedBackend ok2 = backend((c, o) -> ScriptedBackend.Action.ECHO_CRC);
        int dead = Ports.free();
        start(List.of(new HostConfig("127.0.0.1", dead, 1), host(ok1), host(ok2)), RetryPolicyConfig.defaults(), null);
        List<HttpResponse<String>> rs = load(150, 5, i -> get());
        assertThat(rs).allSatisfy(r -> assertThat(r.statusCode()).isEqualTo(200));
        assertThat(retries("retried")).as("connect failures retried").isPositive();
        assertThat(retries("success")).as("each on a live host at once").isEqualTo(retries("retried"));
        assertThat(ok1.requests.get() + ok2.requests.get()).isEqualTo(150);
    }
}
