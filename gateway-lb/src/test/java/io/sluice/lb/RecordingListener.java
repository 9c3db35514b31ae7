package io.sluice.lb;

import io.sluice.core.cluster.HealthStatus;
import io.sluice.core.cluster.Host;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Records listener events as strings. */
final class RecordingListener implements ClusterBalancer.Listener {

    final List<String> events = new ArrayList<>();

    @Override
    public void onHealthChanged(String cluster, Host host, HealthStatus from, HealthStatus to, String reason) {
        events.add(cluster + " " + host.address() + " " + from + " -> " + to + " (" + reason + ")");
    }

    @Override
    public void onEjected(String cluster, Host host, Duration duration, int ejections, String reason) {
        events.add(cluster + " " + host.address() + " ejected " + duration.toSeconds() + "s #" + ejections);
    }

    @Override
    public void onReturned(String cluster, Host host) {
        events.add(cluster + " " + host.address() + " returned");
    }

    @Override
    public void onPanic(String cluster, boolean panicking) {
        events.add(cluster + " panic " + panicking);
    }
}
