package io.sluice.core.config;

/** What a listener speaks to its clients, and what a cluster's hosts speak. */
public enum Protocol {
    HTTP,
    BOLT
}
