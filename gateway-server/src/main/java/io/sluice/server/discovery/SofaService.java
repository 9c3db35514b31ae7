package io.sluice.server.discovery;

/**
 * A SOFARPC service as the Bolt {@code service} header names it: {@code interface:version[:uniqueId]}
 * ({@code ConfigUniqueNameGenerator.getUniqueName}). The uniqueId is everything after the second
 * colon (it may itself contain colons). The version is not in the ZooKeeper registry (SOFARPC writes
 * the constant {@code version=1.0} in every provider URL) and SOFARPC consumers do not match it:
 * providers are selected by interface, uniqueId and protocol.
 *
 * @param interfaceId the interface, the name of the registry node
 * @param version     the version in the header (informational)
 * @param uniqueId    "" when absent
 */
public record SofaService(String interfaceId, String version, String uniqueId) {

    /**
     * Parses a {@code service} header value.
     *
     * @throws IllegalArgumentException if there is no {@code interface:version}
     */
    public static SofaService parse(String service) {
        if (service == null) {
            throw new IllegalArgumentException("no service");
        }
        int c1 = service.indexOf(':');
        if (c1 <= 0) {
            throw new IllegalArgumentException("\"" + service + "\" is not interface:version[:uniqueId]");
        }
        int c2 = service.indexOf(':', c1 + 1);
        String iface = service.substring(0, c1);
        String version = c2 < 0 ? service.substring(c1 + 1) : service.substring(c1 + 1, c2);
        String uid = c2 < 0 ? "" : service.substring(c2 + 1);
        if (iface.indexOf('/') >= 0 || iface.isBlank()) {
            throw new IllegalArgumentException("\"" + service + "\": interface \"" + iface + "\" is not a node name");
        }
        return new SofaService(iface, version, uid);
    }

    /** The registry key: interface and uniqueId (services differing only in version share providers). */
    public String key() {
        return uniqueId.isEmpty() ? interfaceId : interfaceId + ":" + uniqueId;
    }

    /** {@code {root}sofa-rpc/{interface}/providers}; {@code root} ends with "/". */
    public String providersPath(String root) {
        return root + "sofa-rpc/" + interfaceId + "/providers";
    }
}
