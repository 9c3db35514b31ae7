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
 * A handshake is counted once, at its end, off the request path; counters are kept in maps keyed by
 * their tags (a handful of distinct values).
 */
public final class TlsMetrics implements AutoCloseable {

    private final MeterRegistry registry;
    private final String listener;
    private final Map<String, Counter> handshakes = new ConcurrentHashMap<>();
    private final Map<String, Counter> negotiated = new ConcurrentHashMap<>();
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
        add(Gauge.builder("sluice.tls.provider", () -> 1).tags("provider", TlsProvider.name())
                .description("The TLS implementation in use (1)").register(this.registry));
    }

    private <M extends Meter> M add(M m) {
        meters.add(m);
        return m;
    }

    /** A handshake ended. */
    public void handshake(boolean success, String reason) {
        String key = (success ? "success/" : "failure/") + reason;
        handshakes.computeIfAbsent(key, k -> add(Counter.builder("sluice.tls.handshakes")
                .tags("listener", listener, "result", success ? "success" : "failure", "reason", reason)
                .description("TLS handshakes by result and reason").register(registry))).increment();
    }

    /** A successful handshake's protocol and cipher suite. */
    public void negotiated(String protocol, String cipher) {
        negotiated.computeIfAbsent(protocol + '/' + cipher, k -> add(Counter.builder("sluice.tls.negotiated")
                .tags("listener", listener, "protocol", protocol, "cipher", cipher)
                .description("Successful TLS handshakes by protocol and cipher suite").register(registry))).increment();
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
