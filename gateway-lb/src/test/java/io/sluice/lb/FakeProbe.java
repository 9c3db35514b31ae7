package io.sluice.lb;

import io.sluice.core.cluster.Host;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A scriptable {@link HealthProbe}: answers at once per host (UP/DOWN) or holds the callback (HANG). */
final class FakeProbe implements HealthProbe {

    enum Mode { UP, DOWN, HANG }

    private final Map<String, Mode> modes = new HashMap<>();
    final List<ProbeCallback> held = new ArrayList<>();
    int probes;

    FakeProbe set(String address, Mode mode) {
        modes.put(address, mode);
        return this;
    }

    @Override
    public void probe(Host host, ProbeCallback callback) {
        probes++;
        switch (modes.getOrDefault(host.address(), Mode.UP)) {
            case UP -> callback.succeeded();
            case DOWN -> callback.failed("connection refused");
            case HANG -> held.add(callback);
        }
    }
}
