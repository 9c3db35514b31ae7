package io.sluice.server.config;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.DurationFormat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Predicate;

/**
 * A JSON object being read by the config loader: it knows its JSON path, so every error names
 * where the bad value is, and it remembers which keys were asked for, so {@link #finish()} can
 * reject unknown (usually misspelled) keys with a suggestion.
 */
final class JsonObject {

    private final JsonNode node;
    private final String path;
    private final Set<String> known = new LinkedHashSet<>();

    private JsonObject(JsonNode node, String path) {
        this.node = node;
        this.path = path;
    }

    static JsonObject of(JsonNode node, String path) {
        if (node == null || !node.isObject()) {
            throw new ConfigException(path, describe(node), "a JSON object");
        }
        return new JsonObject(node, path);
    }

    String path() {
        return path;
    }

    String at(String key) {
        return path + "." + key;
    }

    boolean has(String key) {
        known.add(key);
        JsonNode v = node.get(key);
        return v != null && !v.isNull();
    }

    /** Marks keys as understood without reading them (they are ignored on purpose). */
    void ignore(String... keys) {
        known.addAll(List.of(keys));
    }

    /**
     * Keys this gateway does not implement but whose absence cannot weaken security or resilience
     * (logging, tracing, labels): one warning naming the present ones and why they are ignored.
     */
    void warnIgnored(List<String> warnings, String why, String... keys) {
        List<String> present = new ArrayList<>();
        for (String k : keys) {
            if (raw(k) != null) {
                present.add(k);
            }
        }
        if (present.size() == 1) {
            warnings.add(at(present.get(0)) + " is ignored (" + why + ")");
        } else if (!present.isEmpty()) {
            warnings.add(path + ": " + String.join(", ", present) + " are ignored (" + why + ")");
        }
    }

    /** Keys this gateway does not implement: present, each is an error naming its path and value. */
    void rejectUnsupported(String why, String... keys) {
        for (String k : keys) {
            rejectUnless(k, v -> false, why);
        }
    }

    /**
     * A key this gateway implements only with the values {@code supported} accepts (for example
     * {@code "bind_port": true}); any other value is an error naming the path and the value.
     */
    void rejectUnless(String key, Predicate<JsonNode> supported, String why) {
        JsonNode v = raw(key);
        if (v != null && !supported.test(v)) {
            throw new ConfigException(at(key), describe(v), why);
        }
    }

    JsonNode raw(String key) {
        known.add(key);
        JsonNode v = node.get(key);
        return v == null || v.isNull() ? null : v;
    }

    String string(String key, String def) {
        JsonNode v = raw(key);
        if (v == null) {
            return def;
        }
        if (!v.isTextual()) {
            throw new ConfigException(at(key), describe(v), "a string");
        }
        return v.asText();
    }

    String requiredString(String key) {
        String s = string(key, null);
        if (s == null) {
            throw new ConfigException(at(key), null, "a string");
        }
        return s;
    }

    int integer(String key, int def) {
        JsonNode v = raw(key);
        if (v == null) {
            return def;
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt()) {
            throw new ConfigException(at(key), describe(v), "a whole number");
        }
        return v.asInt();
    }

    double number(String key, double def) {
        JsonNode v = raw(key);
        if (v == null) {
            return def;
        }
        if (!v.isNumber()) {
            throw new ConfigException(at(key), describe(v), "a number");
        }
        return v.asDouble();
    }

    boolean bool(String key, boolean def) {
        JsonNode v = raw(key);
        if (v == null) {
            return def;
        }
        if (!v.isBoolean()) {
            throw new ConfigException(at(key), describe(v), "true or false");
        }
        return v.asBoolean();
    }

    /** A duration: {@code "250ms"}, {@code "3s"}, {@code "1m"}, or a whole number of milliseconds. */
    Duration duration(String key, Duration def) {
        JsonNode v = raw(key);
        if (v == null) {
            return def;
        }
        if (v.isIntegralNumber()) {
            return Duration.ofMillis(v.asLong());
        }
        if (v.isTextual()) {
            try {
                return DurationFormat.parse(v.asText());
            } catch (IllegalArgumentException e) {
                // reported below
            }
        }
        throw new ConfigException(at(key), describe(v), "a duration like \"250ms\", \"3s\", \"1m\" (or milliseconds)");
    }

    /** A byte size: a whole number of bytes, or {@code "64KiB"}, {@code "16MiB"}, {@code "1GiB"} (KB/MB/GB mean the same). */
    long bytes(String key, long def) {
        JsonNode v = raw(key);
        if (v == null) {
            return def;
        }
        if (v.isIntegralNumber() && v.asLong() >= 0) {
            return v.asLong();
        }
        if (v.isTextual()) {
            String t = v.asText().trim().toUpperCase(Locale.ROOT).replace("IB", "B");
            long unit = t.endsWith("KB") ? 1L << 10 : t.endsWith("MB") ? 1L << 20 : t.endsWith("GB") ? 1L << 30
                    : t.endsWith("B") ? 1 : 0;
            String num = unit == 0 ? t : t.substring(0, t.length() - (unit == 1 ? 1 : 2)).trim();
            try {
                long n = Long.parseLong(num);
                if (n >= 0) {
                    return n * Math.max(unit, 1);
                }
            } catch (NumberFormatException e) {
                // reported below
            }
        }
        throw new ConfigException(at(key), describe(v), "a size in bytes, e.g. 1048576 or \"1MiB\"");
    }

    JsonObject object(String key) {
        JsonNode v = raw(key);
        return v == null ? null : of(v, at(key));
    }

    /** Each element of an array, read by {@code reader(element, pathOfElement)}. */
    <T> List<T> array(String key, BiFunction<JsonNode, String, T> reader) {
        JsonNode v = raw(key);
        if (v == null) {
            return List.of();
        }
        if (!v.isArray()) {
            throw new ConfigException(at(key), describe(v), "a JSON array");
        }
        List<T> out = new ArrayList<>(v.size());
        for (int i = 0; i < v.size(); i++) {
            out.add(reader.apply(v.get(i), at(key) + "[" + i + "]"));
        }
        return out;
    }

    List<String> strings(String key) {
        return array(key, (n, p) -> {
            if (!n.isTextual()) {
                throw new ConfigException(p, describe(n), "a string");
            }
            return n.asText();
        });
    }

    /** Fails on any key that was not asked for, suggesting the closest known key. */
    void finish() {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!known.contains(k)) {
                String best = null;
                int bestDistance = Integer.MAX_VALUE;
                for (String candidate : known) {
                    int d = distance(k.toLowerCase(Locale.ROOT), candidate);
                    if (d < bestDistance) {
                        bestDistance = d;
                        best = candidate;
                    }
                }
                String hint = best != null && bestDistance <= Math.max(2, k.length() / 4)
                        ? "no such key here; did you mean \"" + best + "\"?"
                        : "no such key here; known keys: " + known;
                throw new ConfigException(at(k), describe(node.get(k)), hint);
            }
        }
    }

    /** Levenshtein distance. */
    static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    static String describe(JsonNode v) {
        if (v == null || v.isNull()) {
            return null;
        }
        String s = v.isTextual() ? v.asText() : v.toString();
        return s.length() > 80 ? s.substring(0, 77) + "..." : s;
    }
}
