package io.sluice.server.discovery;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.config.NacosOptions;
import io.sluice.core.discovery.DiscoveredHost;
import io.sluice.core.discovery.HostSource;
import io.sluice.core.time.Cancellable;
import io.sluice.core.time.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The instances of one service in a Nacos naming registry, read with Nacos's HTTP open API
 * ({@code GET /nacos/v1/ns/instance/list}, answered by every Nacos server from 0.8 to 2.x) by polling
 * every {@code poll_interval} on the gateway's shared poll threads ({@link NacosPollers}) with the JDK {@link HttpClient} — never
 * on an event loop, and without the Nacos client library (no new dependency). Each answer is mapped to
 * the <em>whole</em> host list ({@link NacosInstances}); an answer equal to the last one publishes nothing.
 *
 * <p>Failures (connection refused, timeout, HTTP error, an answer that is not an instance list): the
 * source says {@code unreachable (...)} once and publishes nothing, so the gateway keeps the last hosts;
 * it keeps asking every interval, trying the next server address each time, and says {@code reconnected}
 * on the first good answer. With {@code username}/{@code password} it logs in first
 * ({@code POST /nacos/v1/auth/login}) and sends the token, logging in again before it expires or after a 403.
 */
public final class NacosHostSource implements HostSource {

    private static final Logger log = LoggerFactory.getLogger(NacosHostSource.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The context path of Nacos's API (the servers' default). */
    static final String CONTEXT = "/nacos";

    private final DiscoveryConfig config;
    private final NacosOptions nacos;
    private final List<String> servers;
    private final String serviceName;
    private final Runnable onParseFailure;
    private final Scheduler scheduler;
    /** The pollers this source made for itself (the public constructor), closed with it; null when shared. */
    private final NacosPollers own;
    private final HttpClient http;
    private final Duration timeout;
    private volatile Sink sink;
    private volatile boolean closed;
    private volatile Cancellable polling;
    /** Poll thread only from here on. */
    private int serverIndex;
    private Boolean connected;
    private boolean everConnected;
    private List<DiscoveredHost> lastPublished;
    private String token;
    private long tokenExpiresNanos;
    private final Set<String> badInstances = new HashSet<>();
    private long polls;

    /** A source with poll threads of its own (an embedder's); the gateway's share {@link NacosPollers}. */
    public NacosHostSource(DiscoveryConfig config, Runnable onParseFailure) {
        this(config, onParseFailure, new NacosPollers(), true);
    }

    /** A source polling on the gateway's shared threads and HTTP client. */
    NacosHostSource(DiscoveryConfig config, Runnable onParseFailure, NacosPollers pollers) {
        this(config, onParseFailure, pollers, false);
    }

    private NacosHostSource(DiscoveryConfig config, Runnable onParseFailure, NacosPollers pollers, boolean owned) {
        this(config, onParseFailure, pollers, pollers.client(config.connectionTimeout()), owned ? pollers : null);
    }

    /**
     * @param scheduler runs the polls (they block on HTTP: never an event loop). Tests pass a manual
     *                  scheduler to drive the interval exactly.
     */
    NacosHostSource(DiscoveryConfig config, Runnable onParseFailure, Scheduler scheduler) {
        this(config, onParseFailure, scheduler,
                HttpClient.newBuilder().connectTimeout(config.connectionTimeout()).version(HttpClient.Version.HTTP_1_1).build(), null);
    }

    private NacosHostSource(DiscoveryConfig config, Runnable onParseFailure, Scheduler scheduler, HttpClient http,
            NacosPollers own) {
        this.config = config;
        this.nacos = config.nacos() == null ? NacosOptions.defaults() : config.nacos();
        this.servers = List.of(config.address().split(","));
        this.serviceName = NacosInstances.serviceName(config);
        this.onParseFailure = onParseFailure;
        this.own = own;
        this.scheduler = scheduler;
        this.timeout = config.connectionTimeout();
        this.http = http;
    }

    /** The Nacos service name followed. */
    public String serviceName() {
        return serviceName;
    }

    /** Polls made so far (tests). */
    synchronized long polls() {
        return polls;
    }

    @Override
    public void start(Sink s) {
        this.sink = s;
        long interval = nacos.pollInterval().toNanos();
        polling = scheduler.scheduleWithFixedDelay(this::poll, 0, interval);
    }

    /** One request for the instance list (the poll thread). */
    synchronized void poll() {
        if (closed) {
            return;
        }
        polls++;
        String server = servers.get(serverIndex % servers.size()).trim();
        List<DiscoveredHost> hosts;
        try {
            hosts = fetch(server, true);
        } catch (Exception e) {
            if (closed) {
                return;
            }
            serverIndex++; // the next poll asks the next server
            String why = e instanceof InterruptedException ? "interrupted" : describe(e);
            if (connected == null || connected) {
                connected = false;
                sink.state("unreachable (" + server + ": " + why + ")", false);
            }
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        if (connected == null || !connected) {
            connected = true;
            sink.state(everConnected ? "reconnected (" + server + ")" : "connected (" + server + ")", true);
            everConnected = true;
        }
        if (!hosts.equals(lastPublished)) {
            lastPublished = hosts;
            sink.hosts(hosts);
        }
    }

    private List<DiscoveredHost> fetch(String server, boolean mayLogin) throws Exception {
        String base = "http://" + server + CONTEXT;
        if (nacos.username() != null && (token == null || scheduler.ticker().nanoTime() - tokenExpiresNanos >= 0)) {
            login(base);
        }
        StringBuilder q = new StringBuilder("serviceName=").append(enc(serviceName))
                .append("&groupName=").append(enc(nacos.group()))
                .append("&clusters=").append(enc(String.join(",", nacos.clusters())))
                .append("&healthyOnly=").append(nacos.healthyOnly());
        if (!nacos.namespace().isEmpty() && !"public".equals(nacos.namespace())) {
            q.append("&namespaceId=").append(enc(nacos.namespace()));
        }
        if (token != null) {
            q.append("&accessToken=").append(enc(token));
        }
        HttpRequest req = HttpRequest.newBuilder(URI.create(base + "/v1/ns/instance/list?" + q)).timeout(timeout).GET().build();
        HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 403 && nacos.username() != null && mayLogin) {
            token = null; // expired or revoked: log in again once
            return fetch(server, false);
        }
        String body = r.body() == null ? "" : r.body();
        if (r.statusCode() == 404 && body.contains("not found") || r.statusCode() == 400 && body.contains("can not find cluster")) {
            return List.of(); // servers before 1.0: "dom not found" (no such service yet), "can not find cluster" (none in it)
        }
        if (r.statusCode() != 200) {
            throw new IllegalStateException("HTTP " + r.statusCode() + " " + abbreviate(r.body()));
        }
        JsonNode answer = JSON.readTree(r.body());
        return NacosInstances.hosts(answer, nacos.healthyOnly(), (id, why) -> {
            if (badInstances.add(id)) {
                onParseFailure.run();
                log.warn("discovery: nacos {}: skipping instance {}: {}", serviceName, id, why);
            }
        });
    }

    private void login(String base) throws Exception {
        String form = "username=" + enc(nacos.username()) + "&password=" + enc(nacos.password());
        HttpRequest req = HttpRequest.newBuilder(URI.create(base + "/v1/auth/login")).timeout(timeout)
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form)).build();
        HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IllegalStateException("login as " + nacos.username() + ": HTTP " + r.statusCode());
        }
        JsonNode a = JSON.readTree(r.body());
        String t = a.path("accessToken").asText(null);
        if (t == null || t.isEmpty()) {
            throw new IllegalStateException("login as " + nacos.username() + ": no accessToken in the answer");
        }
        long ttlSeconds = Math.max(10, a.path("tokenTtl").asLong(18_000));
        token = t;
        tokenExpiresNanos = scheduler.ticker().nanoTime() + TimeUnit.SECONDS.toNanos(ttlSeconds) / 2; // renew at half-life
    }

    private static String describe(Exception e) {
        String m = e.getMessage();
        return e.getClass().getSimpleName() + (m == null || m.isBlank() ? "" : " " + abbreviate(m));
    }

    private static String abbreviate(String s) {
        if (s == null) {
            return "";
        }
        s = s.replace('\n', ' ').trim();
        return s.length() > 160 ? s.substring(0, 160) + "..." : s;
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        closed = true;
        Cancellable c = polling;
        if (c != null) {
            c.cancel();
        }
        if (own != null) {
            own.close();
        }
    }

    @Override
    public String toString() {
        return "nacos " + config.address() + " " + (nacos.namespace().isEmpty() ? "public" : nacos.namespace()) + "/"
                + nacos.group() + "/" + serviceName + " " + nacos.clusters() + " every " + nacos.pollInterval().toMillis() + " ms";
    }
}
