package io.sluice.server.http.rules;

import io.netty.util.AsciiString;
import io.sluice.core.config.HeaderRules;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@link HeaderRules} of one direction compiled at config load: the names to drop (removed and
 * set headers: a client's copy of a header the gateway sets never passes), and the lines to
 * write, their values pre-split into literal text and variables.
 */
public final class HeaderRuleSet {

    /** Variable ids. */
    static final int CLIENT = 1;
    static final int REQUEST_ID = 2;
    static final int ROUTE = 3;
    static final int UPSTREAM = 4;
    static final int TRACE_ID = 5;

    /** Lower-case names of headers to drop. */
    final byte[][] drop;
    /** Header names to write, and their value parts (a String literal, or an Integer variable id). */
    final String[] names;
    final Object[][] values;
    /** HTTP/2 (lower-case) spellings of {@link #drop} and {@link #names}. */
    final AsciiString[] dropH2;
    final AsciiString[] namesH2;

    private HeaderRuleSet(byte[][] drop, String[] names, Object[][] values) {
        this.drop = drop;
        this.names = names;
        this.values = values;
        this.dropH2 = new AsciiString[drop.length];
        for (int i = 0; i < drop.length; i++) {
            dropH2[i] = new AsciiString(drop[i]);
        }
        this.namesH2 = new AsciiString[names.length];
        for (int i = 0; i < names.length; i++) {
            namesH2[i] = AsciiString.cached(names[i].toLowerCase(Locale.ROOT));
        }
    }

    /** The compiled rules, or null when {@code rules} is null or empty (callers then do nothing). */
    public static HeaderRuleSet compile(HeaderRules rules) {
        return compile(null, rules);
    }

    /**
     * A cluster's rules and then a route's as one set, or null when both are empty. Removals and
     * sets of both apply to the head as received; the lines written are the cluster's, then the route's.
     */
    public static HeaderRuleSet compile(HeaderRules cluster, HeaderRules route) {
        boolean none = (cluster == null || cluster.isEmpty()) && (route == null || route.isEmpty());
        if (none) {
            return null;
        }
        List<byte[]> drop = new ArrayList<>();
        List<String> names = new ArrayList<>();
        List<Object[]> values = new ArrayList<>();
        for (HeaderRules rules : new HeaderRules[] {cluster, route}) {
            if (rules == null) {
                continue;
            }
            for (String n : rules.remove()) {
                drop.add(n.toLowerCase(Locale.ROOT).getBytes(StandardCharsets.US_ASCII));
            }
            for (HeaderRules.Header h : rules.set()) {
                drop.add(h.name().toLowerCase(Locale.ROOT).getBytes(StandardCharsets.US_ASCII));
                names.add(h.name());
                values.add(parts(h.value()));
            }
            for (HeaderRules.Header h : rules.add()) {
                names.add(h.name());
                values.add(parts(h.value()));
            }
        }
        return new HeaderRuleSet(drop.toArray(new byte[0][]), names.toArray(new String[0]), values.toArray(new Object[0][]));
    }

    private static Object[] parts(String value) {
        List<String> p = HeaderRules.parts(value);
        List<Object> out = new ArrayList<>();
        for (int i = 0; i < p.size(); i++) {
            if (i % 2 == 0) {
                if (!p.get(i).isEmpty()) {
                    out.add(p.get(i));
                }
            } else {
                out.add(switch (p.get(i)) {
                    case "DOWNSTREAM_REMOTE_ADDRESS" -> CLIENT;
                    case "REQUEST_ID" -> REQUEST_ID;
                    case "ROUTE_NAME" -> ROUTE;
                    case "UPSTREAM_HOST" -> UPSTREAM;
                    case "TRACE_ID" -> TRACE_ID;
                    default -> throw new IllegalStateException(p.get(i)); // HeaderRules validated them
                });
            }
        }
        return out.toArray();
    }
}
