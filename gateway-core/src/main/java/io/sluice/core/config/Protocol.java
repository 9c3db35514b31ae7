package io.sluice.core.config;

import java.util.Locale;

/** What a listener speaks to its clients, and what a cluster's hosts speak. */
public enum Protocol {
    HTTP,
    BOLT,
    /**
     * Listeners only: HTTP/1.x and Bolt on one port, told apart by the first byte a client sends
     * (Bolt's protocol codes 1 and 2 are not the first byte of any HTTP request).
     */
    AUTO;

    /** The name in config files, metrics and the admin API: {@code http}, {@code bolt}, {@code auto}. */
    public String jsonName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
