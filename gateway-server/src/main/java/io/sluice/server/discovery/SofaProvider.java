package io.sluice.server.discovery;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * One provider child of a SOFARPC ZooKeeper registry ({@code {root}sofa-rpc/{interface}/providers/
 * {URLEncoder.encode(url)}}), parsed the way SOFARPC's own consumer parses it
 * ({@code ZookeeperRegistryHelper.convertUrlToProvider}): the URL is
 * {@code protocol://host:port[/path]?version=1.0&k=v&...}, parameters in any order.
 *
 * @param protocol scheme, lower case ({@code bolt} when absent)
 * @param host     the registered host (a provider bound to 127.x registers its machine address unless it sets a virtual host)
 * @param port     the registered port
 * @param params   every {@code k=v} pair (values verbatim)
 */
public record SofaProvider(String protocol, String host, int port, Map<String, String> params) {

    /** SOFARPC's default provider weight ({@code provider.weight}). */
    public static final int DEFAULT_WEIGHT = 100;

    /**
     * Parses a child node name (still URL-encoded).
     *
     * @throws IllegalArgumentException if it does not decode or has no usable host and port
     */
    public static SofaProvider parse(String childName) {
        String url = URLDecoder.decode(childName, StandardCharsets.UTF_8);
        String protocol = "bolt";
        String rest = url;
        int scheme = url.indexOf("://");
        if (scheme >= 0) {
            protocol = url.substring(0, scheme).toLowerCase(java.util.Locale.ROOT);
            rest = url.substring(scheme + 3);
        }
        int q = rest.indexOf('?');
        String authority = q < 0 ? rest : rest.substring(0, q);
        int slash = authority.indexOf('/');
        if (slash >= 0) {
            authority = authority.substring(0, slash);
        }
        int colon = authority.lastIndexOf(':');
        if (colon <= 0 || authority.indexOf(':') != colon) {
            throw new IllegalArgumentException("no host:port in \"" + url + "\"");
        }
        String host = authority.substring(0, colon);
        int port;
        try {
            port = Integer.parseInt(authority.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad port in \"" + url + "\"");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " out of range in \"" + url + "\"");
        }
        Map<String, String> params = new HashMap<>();
        if (q >= 0 && q + 1 < rest.length()) {
            for (String pair : rest.substring(q + 1).split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                if (eq < 0) {
                    throw new IllegalArgumentException("parameter \"" + pair + "\" has no '=' in \"" + url + "\"");
                }
                params.put(pair.substring(0, eq), pair.substring(eq + 1));
            }
        }
        return new SofaProvider(protocol, host, port, Map.copyOf(params));
    }

    /** {@code weight}, SOFARPC's fallback 100 when absent or unparseable, negative = 0; {@code disabled=true} = 0. */
    public int weight() {
        if ("true".equalsIgnoreCase(params.get("disabled"))) {
            return 0;
        }
        String w = params.get("weight");
        if (w == null || w.isBlank()) {
            return DEFAULT_WEIGHT;
        }
        try {
            return Math.max(0, Integer.parseInt(w.trim()));
        } catch (NumberFormatException e) {
            return DEFAULT_WEIGHT;
        }
    }

    /** {@code startTime} (epoch ms, the provider's clock), 0 when absent or unparseable. */
    public long startTime() {
        return longParam("startTime");
    }

    /** {@code warmupTime} in ms, 0 when absent. */
    public long warmupTime() {
        return longParam("warmupTime");
    }

    /** {@code warmupWeight}, -1 when absent or unparseable (negative = 0, as a weight). */
    public int warmupWeight() {
        String v = params.get("warmupWeight");
        if (v == null || v.isBlank()) {
            return -1;
        }
        try {
            return Math.max(0, Integer.parseInt(v.trim()));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The {@code uniqueId} parameter, or null when the URL has none (SOFARPC consumers then never match it). */
    public String uniqueId() {
        return params.get("uniqueId");
    }

    /** {@code host:port}. */
    public String address() {
        return host + ":" + port;
    }

    /** True if a SOFARPC consumer of {@code service} over {@code protocol} would use this provider. */
    public boolean matches(SofaService service, String wantedProtocol) {
        return protocol.equalsIgnoreCase(wantedProtocol) && service.uniqueId().equals(uniqueId());
    }

    private long longParam(String key) {
        String v = params.get(key);
        if (v == null || v.isBlank()) {
            return 0;
        }
        try {
            return Math.max(0, Long.parseLong(v.trim()));
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
