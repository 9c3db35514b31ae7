package io.sluice.server.tls;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * Meters of one listener's downstream TLS (Prometheus names in docs/operations.md):
 * <ul>
 *   <li>{@code sluice_tls_handshakes_total{listener,result,reason}}: result {@code success} or
 *       {@code failure}; reason {@code ok}, {@code no_certificate}, {@code unknown_ca},
 *       {@code expired}, {@code protocol}, {@code cipher}, {@code timeout}, {@code not_tls},
 *       {@code closed}, {@code other}</li>
 *   <li>{@code sluice_tls_negotiated_total{listener,protocol,cipher}}</li>
 *   <li>{@code sluice_tls_certificate_expiry_days{listener,certificate}} (gauge per loaded certificate)</li>
 *   <li>{@code sluice_tls_reloads_total{listener,outcome}}: certificate reloads, {@code success} / {@code failure}</li>
 *   <li>{@code sluice_tls_provider{provider}}: 1 for the provider in use</li>
 * </ul>
 * A handshake is counted once, at its end, off the request path: a successful one by a counter
 * registered up front, the rest (and protocol/cipher) in maps keyed by their tags (a handful of
 * distinct values), looked up without building a key string per handshake.
 */
public final class TlsMetrics implements AutoCloseable {

    private final MeterRegistry registry;
    private final String listener;
    private final Map<String, Counter> handshakes = new ConcurrentHashMap<>();
    /** protocol -> cipher -> counter. */
    private final Map<String, Map<String, Counter>> negotiated = new ConcurrentHashMap<>();
    private final Counter handshakeOk;
    private final Map<String, Meter> expiry = new ConcurrentHashMap<>();
    private final List<Meter> meters = new CopyOnWriteArrayList<>();
    private final Counter reloadOk;
    private final Counter reloadFailed;

    public TlsMetrics(MeterRegistry registry, String listener) {
        this.registry = registry == null ? new SimpleMeterRegistry() : registry;
        this.listener = listener;
        reloadOk = add(Counter.builder("sluice.tls.reloads").tags("listener", listener, "outcome", "success")
                .description("Certificate reloads of a TLS listener").register(this.registry));
        reloadFailed = add(Counter.builder("sluice.tls.reloads").tags("listener", listener, "outcome", "failure")
                .description("Certificate reloads of a TLS listener").register(this.registry));
        handshakeOk = handshakeCounter(true, "ok");
        add(Gauge.builder("sluice.tls.provider", () -> 1).tags("provider", TlsProvider.name())
                .description("The TLS implementation in use (1)").register(this.registry));
    }

    private <M extends Meter> M add(M m) {
        meters.add(m);
        return m;
    }

    /** A handshake ended. */
    public void handshake(boolean success, String reason) {
        if (success && "ok".equals(reason)) {
            handshakeOk.increment();
            return;
        }
        handshakeCounter(success, reason).increment();
    }

    private Counter handshakeCounter(boolean success, String reason) {
        return handshakes.computeIfAbsent((success ? "success/" : "failure/") + reason, k -> add(Counter.builder("sluice.tls.handshakes")
                .tags("listener", listener, "result", success ? "success" : "failure", "reason", reason)
                .description("TLS handshakes by result and reason").register(registry)));
    }

    /** A successful handshake's protocol and cipher suite. */
    public void negotiated(String protocol, String cipher) {
        Map<String, Counter> byCipher = negotiated.get(protocol);
        Counter c = byCipher == null ? null : byCipher.get(cipher);
        if (c == null) {
            c = negotiated.computeIfAbsent(protocol, p -> new ConcurrentHashMap<>()).computeIfAbsent(cipher,
                    k -> add(Counter.builder("sluice.tls.negotiated")
                            .tags("listener", listener, "protocol", protocol, "cipher", cipher)
                            .description("Successful TLS handshakes by protocol and cipher suite").register(registry)));
        }
        c.increment();
    }

    /** Handshakes counted with these tags (tests). */
    public long handshakes(boolean success, String reason) {
        Counter c = handshakes.get((success ? "success/" : "failure/") + reason);
        return c == null ? 0 : (long) c.count();
    }

    public void reloaded(boolean ok) {
        (ok ? reloadOk : reloadFailed).increment();
    }

    public long reloads(boolean ok) {
        return (long) (ok ? reloadOk : reloadFailed).count();
    }

    /** Exports the days until expiry of the loaded certificates (replacing the previous set). */
    void certificates(Map<String, Supplier<Number>> daysByName) {
        expiry.entrySet().removeIf(e -> {
            if (!daysByName.containsKey(e.getKey())) {
                registry.remove(e.getValue());
                meters.remove(e.getValue());
                return true;
            }
            return false;
        });
        daysByName.forEach((name, days) -> expiry.computeIfAbsent(name, n -> add(Gauge.builder("sluice.tls.certificate.expiry",
                        days, d -> d.get().doubleValue()).baseUnit("days")
                .strongReference(true).tags("listener", listener, "certificate", n)
                .description("Days until the certificate expires").register(registry))));
    }

    @Override
    public void close() {
        for (Meter m : meters) {
            registry.remove(m);
        }
        meters.clear();
        handshakes.clear();
        negotiated.clear();
        expiry.clear();
    }
}
