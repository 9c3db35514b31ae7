package io.sluice.server.config;

import io.sluice.core.config.GatewayConfig;

import java.util.List;

/**
 * A config file read and validated.
 *
 * @param config   the gateway config
 * @param format   which format the file was in
 * @param warnings things the file asked for that this gateway ignores (MOSN-only keys), one line each
 */
public record LoadedConfig(GatewayConfig config, Format format, List<String> warnings) {

    /** The file formats {@link ConfigLoader} reads. */
    public enum Format { NATIVE, MOSN }
}
