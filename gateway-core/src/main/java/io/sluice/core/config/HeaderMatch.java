package io.sluice.core.config;

/**
 * Matches one request header (HTTP header, or Bolt header-map entry) by name, case-insensitive for
 * HTTP. A null {@code value} matches when the header is present at all.
 */
public record HeaderMatch(String name, StringMatch value) {

    public HeaderMatch {
        Checks.notBlank("name", name);
    }
}
