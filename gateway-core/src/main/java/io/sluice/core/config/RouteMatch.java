package io.sluice.core.config;

import java.util.List;
import java.util.Locale;

/**
 * What a request must look like for a route to apply; every given condition must hold, and an
 * empty match matches everything.
 *
 * @param hosts     HTTP Host (port stripped, case-insensitive): exact names, or {@code *.suffix}; empty = any
 * @param path      HTTP path (without query); null = any
 * @param methods   HTTP methods (upper case); empty = any
 * @param headers   header conditions (HTTP headers, or Bolt header-map entries)
 * @param service   Bolt: the {@code service} header, falling back to {@code sofa_head_target_service}; null = any
 * @param rpcMethod Bolt: the {@code sofa_head_method_name} header; null = any
 */
public record RouteMatch(List<String> hosts, StringMatch path, List<String> methods, List<HeaderMatch> headers,
                         StringMatch service, StringMatch rpcMethod) {

    public static final RouteMatch ANY = new RouteMatch(null, null, null, null, null, null);

    public RouteMatch {
        hosts = Checks.list(hosts).stream().map(h -> h.toLowerCase(Locale.ROOT)).toList();
        for (int i = 0; i < hosts.size(); i++) {
            String h = hosts.get(i);
            if (h.isBlank() || (h.contains("*") && !(h.startsWith("*.") && h.indexOf('*', 1) < 0) && !h.equals("*"))) {
                throw new ConfigException("hosts[" + i + "]", h, "a host name, \"*\" or \"*.suffix\"");
            }
        }
        methods = Checks.list(methods).stream().map(m -> m.toUpperCase(Locale.ROOT)).toList();
        headers = Checks.list(headers);
    }

    public static RouteMatch pathPrefix(String prefix) {
        return new RouteMatch(null, StringMatch.prefix(prefix), null, null, null, null);
    }

    /** True if {@code host} (lower case, no port) is accepted by {@link #hosts()}. */
    public boolean matchesHost(String host) {
        if (hosts.isEmpty()) {
            return true;
        }
        for (String h : hosts) {
            if (h.equals("*")) {
                return true;
            }
            if (h.startsWith("*.")) {
                if (host != null && host.length() > h.length() - 1 && host.endsWith(h.substring(1))) {
                    return true;
                }
            } else if (h.equals(host)) {
                return true;
            }
        }
        return false;
    }
}
