package io.sluice.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Meters of one listener, created once and cached in arrays so recording a request costs a few
 * array reads and atomic adds (no tag lookups on the hot path).
 *
 * <ul>
 *   <li>{@code sluice.downstream.connections.active} (gauge), {@code sluice.downstream.connections.accepted}</li>
 *   <li>{@code sluice.requests} tagged {@code listener, protocol, outcome, status} (status class: 2xx..5xx, or "none")</li>
 *   <li>{@code sluice.request.duration} timer tagged {@code listener, protocol}, with a histogram</li>
 * </ul>
 */
public final class ListenerMetrics implements AutoCloseable {

    private static final String[] STATUS_CLASSES = {"none", "1xx", "2xx", "3xx", "4xx", "5xx"};

    private final MeterRegistry registry;
    private final List<Meter> meters = new ArrayList<>();
    private final AtomicInteger activeConnections = new AtomicInteger();
    private final AtomicInteger activeRequests = new AtomicInteger();
    private final Counter accepted;
    private final Counter[][] requests;
    private final Timer duration;

    public ListenerMetrics(MeterRegistry registry, String listener, String protocol) {
        this.registry = registry;
        meters.add(Gauge.builder("sluice.downstream.connections.active", activeConnections, AtomicInteger::get)
                .tags("listener", listener, "protocol", protocol).description("Open client connections").register(registry));
        meters.add(Gauge.builder("sluice.downstream.requests.active", activeRequests, AtomicInteger::get)
                .tags("listener", listener, "protocol", protocol).description("Requests in flight").register(registry));
        accepted = add(Counter.builder("sluice.downstream.connections.accepted")
                .tags("listener", listener, "protocol", protocol).description("Client connections accepted").register(registry));
        RequestOutcome[] outcomes = RequestOutcome.values();
        requests = new Counter[outcomes.length][STATUS_CLASSES.length];
        for (RequestOutcome o : outcomes) {
            for (int s = 0; s < STATUS_CLASSES.length; s++) {
                requests[o.ordinal()][s] = add(Counter.builder("sluice.requests")
                        .tags("listener", listener, "protocol", protocol, "outcome", o.tag(), "status", STATUS_CLASSES[s])
                        .description("Requests by outcome and response status class").register(registry));
            }
        }
        duration = add(Timer.builder("sluice.request.duration")
                .tags("listener", listener, "protocol", protocol)
                .description("Time from request head to the last byte of the response")
                .serviceLevelObjectives(Duration.ofNanos(250_000), Duration.ofMillis(1), Duration.ofMillis(5),
                        Duration.ofMillis(25), Duration.ofMillis(100), Duration.ofMillis(500), Duration.ofSeconds(2),
                        Duration.ofSeconds(10))
                .register(registry));
    }

    private <M extends Meter> M add(M m) {
        meters.add(m);
        return m;
    }

    public void connectionOpened() {
        accepted.increment();
        activeConnections.incrementAndGet();
    }

    public void connectionClosed() {
        activeConnections.decrementAndGet();
    }

    public int activeConnections() {
        return activeConnections.get();
    }

    public void requestStarted() {
        activeRequests.incrementAndGet();
    }

    public int activeRequests() {
        return activeRequests.get();
    }

    /** Records a finished request: {@code status} 0 when no response was sent. */
    public void requestFinished(RequestOutcome outcome, int status, long durationNanos) {
        activeRequests.decrementAndGet();
        int cls = status <= 0 ? 0 : Math.min(5, status / 100);
        requests[outcome.ordinal()][cls].increment();
        duration.record(durationNanos, TimeUnit.NANOSECONDS);
    }

    /** Count of requests with this outcome (all status classes); for tests and the admin API. */
    public double count(RequestOutcome outcome) {
        double sum = 0;
        for (Counter c : requests[outcome.ordinal()]) {
            sum += c.count();
        }
        return sum;
    }

    @Override
    public void close() {
        for (Meter m : meters) {
            registry.remove(m);
        }
    }
}
