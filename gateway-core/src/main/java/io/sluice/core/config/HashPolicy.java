package io.sluice.core.config;

import java.util.Locale;

/**
 * Where a request's hash key comes from, for {@code ring_hash} / {@code maglev} clusters and sticky
 * weighted clusters. A route lists policies in order; the first that yields a value is the key.
 *
 * @param kind the source
 * @param name the header or cookie name (null for {@link Kind#CLIENT_ADDRESS} and {@link Kind#SERVICE})
 */
public record HashPolicy(Kind kind, String name) {

    /** Sources of a hash key. */
    public enum Kind {
        /** An HTTP header (case-insensitive) or a Bolt header-map entry. */
        HEADER,
        /** An HTTP cookie of the {@code Cookie} header. */
        COOKIE,
        /** The client's IP address (the connection's peer, never a forwarded header). */
        CLIENT_ADDRESS,
        /** Bolt: the request's service name. */
        SERVICE
    }

    public HashPolicy {
        Checks.notNull("kind", kind);
        if (kind == Kind.HEADER || kind == Kind.COOKIE) {
            Checks.notBlank(kind.name().toLowerCase(Locale.ROOT), name);
        } else {
            name = null;
        }
    }

    public static HashPolicy header(String name) {
        return new HashPolicy(Kind.HEADER, name);
    }

    public static HashPolicy cookie(String name) {
        return new HashPolicy(Kind.COOKIE, name);
    }

    public static HashPolicy clientAddress() {
        return new HashPolicy(Kind.CLIENT_ADDRESS, null);
    }
}
