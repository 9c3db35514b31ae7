package io.sluice.server.config;

import io.sluice.core.config.GatewayConfig;
import io.sluice.server.warmup.WarmUpConfig;

import java.util.List;

/**
 * A config file read and validated.
 *
 * @param config   the gateway config
 * @param format   which format the file was in
 * @param warnings things the file asked for that this gateway ignores (MOSN-only keys), one line each
 * @param warmUp   the top-level {@code warm_up} section (read at start only; the standalone default,
 *                 on for 3 s, when the file has none or is in MOSN format)
 */
public record LoadedConfig(GatewayConfig config, Format format, List<String> warnings, WarmUpConfig warmUp) {

    public LoadedConfig {
        warmUp = warmUp == null ? WarmUpConfig.standaloneDefault() : warmUp; // warm-up
    }

    public LoadedConfig(GatewayConfig config, Format format, List<String> warnings) {
        this(config, format, warnings, null);
    }

    /** The file formats {@link ConfigLoader} reads. */
    public enum Format { NATIVE, MOSN }
}
