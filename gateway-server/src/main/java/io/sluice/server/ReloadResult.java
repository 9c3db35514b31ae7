package io.sluice.server;

import io.sluice.core.config.GatewayConfig;

import java.util.List;

/**
 * What a successful {@link Gateway#reload(GatewayConfig)} changed.
 *
 * @param version          the config version now running (1 = the config the gateway started with)
 * @param clustersAdded    clusters created (hosts start warming up if slow start is on)
 * @param clustersRemoved  clusters closed (no route references them any more)
 * @param clustersUpdated  clusters whose config changed, updated in place (kept hosts keep health and warm-up)
 * @param listenersChanged listeners whose routes or options changed (new route table swapped in)
 */
public record ReloadResult(long version, List<String> clustersAdded, List<String> clustersRemoved,
                           List<String> clustersUpdated, List<String> listenersChanged) {

    public ReloadResult {
        clustersAdded = List.copyOf(clustersAdded);
        clustersRemoved = List.copyOf(clustersRemoved);
        clustersUpdated = List.copyOf(clustersUpdated);
        listenersChanged = List.copyOf(listenersChanged);
    }

    /** True if the new config equals the running one in everything a reload applies. */
    public boolean unchanged() {
        return clustersAdded.isEmpty() && clustersRemoved.isEmpty() && clustersUpdated.isEmpty() && listenersChanged.isEmpty();
    }

    /** One line: {@code config version 3: clusters added [b] removed [] updated [a]; listeners changed [web]}. */
    public String summary() {
        if (unchanged()) {
            return "config version " + version + ": nothing changed";
        }
        return "config version " + version + ": clusters added " + clustersAdded + " removed " + clustersRemoved
                + " updated " + clustersUpdated + "; routes/options changed on listeners " + listenersChanged;
    }
}
