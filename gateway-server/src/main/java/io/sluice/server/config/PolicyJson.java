package io.sluice.server.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.core.config.DurationFormat;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.CircuitBreakerConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.RetryOn;
import io.sluice.core.config.RetryPolicyConfig;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Reads the resilience keys of the native format: {@code retry_policy} (route and cluster) and
 * {@code circuit_breakers} (cluster). Unknown keys and bad values fail with the JSON path.
 */
final class PolicyJson {

    private PolicyJson() {
    }

    /** {@code retry_policy}, or null when absent. */
    static RetryPolicyConfig retryPolicy(JsonObject o) {
        if (o == null) {
            return null;
        }
        RetryPolicyConfig d = RetryPolicyConfig.defaults();
        Set<RetryOn> on = retryOn(o.raw("retry_on"), o.at("retry_on"));
        List<Integer> codes = o.array("retriable_status_codes", (n, p) -> {
            if (n == null || !n.isIntegralNumber() || !n.canConvertToInt()) {
                throw new ConfigException(p, JsonObject.describe(n), "an HTTP status");
            }
            return n.asInt();
        });
        int num = o.integer("num_retries", d.numRetries());
        Duration perTry = o.duration("per_try_timeout", null);
        JsonObject backOff = o.object("retry_back_off");
        Duration base = null;
        Duration max = null;
        if (backOff != null) {
            base = backOff.duration("base_interval", null);
            max = backOff.duration("max_interval", null);
            backOff.finish();
        }
        long body = o.bytes("max_body_bytes", d.maxBodyBytes());
        if (body > Integer.MAX_VALUE) {
            throw new ConfigException(o.at("max_body_bytes"), body, "a size of at most 64MiB");
        }
        boolean nonIdempotent = o.bool("retry_non_idempotent", false);
        boolean idempotent = o.bool("idempotent", false);
        boolean include = o.bool("include_attempt_count", false);
        o.finish();
        Duration b = base;
        Duration m = max;
        String at = o.path();
        return ConfigLoader.build(at, () -> {
            try {
                return new RetryPolicyConfig(on, codes, num, perTry, b, m, (int) body, nonIdempotent, idempotent, include);
            } catch (ConfigException e) {
                // back-off fields live one level down
                String p = e.path();
                throw p.equals("base_interval") || p.equals("max_interval") ? e.under("retry_back_off") : e;
            }
        });
    }

    /** {@code "5xx,reset"} (Envoy's spelling) or {@code ["5xx", "reset"]}; null when absent. */
    private static Set<RetryOn> retryOn(JsonNode n, String path) {
        if (n == null) {
            return null;
        }
        List<String> tokens = new ArrayList<>();
        if (n.isTextual()) {
            for (String t : n.asText().split(",")) {
                tokens.add(t.trim());
            }
        } else if (n.isArray()) {
            for (int i = 0; i < n.size(); i++) {
                if (!n.get(i).isTextual()) {
                    throw new ConfigException(path + "[" + i + "]", JsonObject.describe(n.get(i)), "a retry condition");
                }
                tokens.add(n.get(i).asText().trim());
            }
        } else {
            throw new ConfigException(path, JsonObject.describe(n), "a list of retry conditions");
        }
        Set<RetryOn> out = EnumSet.noneOf(RetryOn.class);
        for (String t : tokens) {
            RetryOn r = RetryOn.parse(t);
            if (r == null) {
                throw new ConfigException(path, t, "retry conditions among " + names());
            }
            out.add(r);
        }
        if (out.isEmpty()) {
            throw new ConfigException(path, n.toString(), "at least one retry condition");
        }
        return out;
    }

    private static String names() {
        StringBuilder sb = new StringBuilder();
        for (RetryOn r : RetryOn.values()) {
            sb.append(sb.length() == 0 ? "" : ", ").append(r.token());
        }
        return sb.toString();
    }

    /** {@code circuit_breakers}, or null (the defaults) when absent. */
    static CircuitBreakerConfig circuitBreakers(JsonObject o, Protocol protocol) {
        if (o == null) {
            return null;
        }
        CircuitBreakerConfig d = CircuitBreakerConfig.defaults(protocol);
        int cx = o.integer("max_connections", d.maxConnections());
        int pending = o.integer("max_pending_requests", d.maxPendingRequests());
        int rq = o.integer("max_requests", d.maxRequests());
        int host = o.integer("max_host_requests", d.maxHostRequests());
        double percent = d.budgetPercent();
        int min = d.minRetryConcurrency();
        JsonObject budget = o.object("retry_budget");
        if (budget != null) {
            percent = budget.number("budget_percent", percent);
            min = budget.integer("min_retry_concurrency", min);
            budget.finish();
        }
        o.finish();
        double p = percent;
        int m = min;
        return ConfigLoader.build(o.path(), () -> new CircuitBreakerConfig(cx, pending, rq, p, m, host));
    }

    /** Writes {@code retry_policy} into {@code parent} (nothing when null), every value explicit. */
    static void render(ObjectNode parent, RetryPolicyConfig r) {
        if (r == null) {
            return;
        }
        ObjectNode o = parent.putObject("retry_policy");
        ArrayNode on = o.putArray("retry_on");
        for (RetryOn x : RetryOn.values()) {
            if (r.retryOn().contains(x)) {
                on.add(x.token());
            }
        }
        ArrayNode codes = o.putArray("retriable_status_codes");
        r.retriableStatusCodes().forEach(codes::add);
        o.put("num_retries", r.numRetries());
        if (r.perTryTimeout() != null) {
            o.put("per_try_timeout", DurationFormat.format(r.perTryTimeout()));
        }
        o.putObject("retry_back_off").put("base_interval", DurationFormat.format(r.baseInterval()))
                .put("max_interval", DurationFormat.format(r.maxInterval()));
        o.put("max_body_bytes", r.maxBodyBytes()).put("retry_non_idempotent", r.retryNonIdempotent())
                .put("idempotent", r.idempotent()).put("include_attempt_count", r.includeAttemptCount());
    }

    /** Writes {@code circuit_breakers} into {@code parent}, every value explicit. */
    static void render(ObjectNode parent, CircuitBreakerConfig c) {
        ObjectNode o = parent.putObject("circuit_breakers").put("max_connections", c.maxConnections())
                .put("max_pending_requests", c.maxPendingRequests()).put("max_requests", c.maxRequests())
                .put("max_host_requests", c.maxHostRequests());
        o.putObject("retry_budget").put("budget_percent", c.budgetPercent())
                .put("min_retry_concurrency", c.minRetryConcurrency());
    }

    // ------------------------------------------------------------------ MOSN format

    /**
     * MOSN's route {@code retry_policy}: {@code retry_on} (a boolean: retry 5xx answers and failed
     * connections), {@code num_retries}, {@code retry_timeout} (per try). Null when retries are off.
     */
    static RetryPolicyConfig mosnRetryPolicy(JsonObject o, List<String> warnings) {
        if (o == null) {
            return null;
        }
        boolean on = o.bool("retry_on", false);
        int num = o.integer("num_retries", 0);
        Duration perTry = o.duration("retry_timeout", null);
        o.finish();
        if (!on || num == 0) {
            return null;
        }
        warnings.add(o.path() + ": MOSN retries any method; here a request with a non-idempotent method (POST, PATCH)"
                + " is retried only when nothing was sent yet (set retry_non_idempotent in the native format to change that)");
        Duration t = perTry == null || perTry.isZero() ? null : perTry;
        return ConfigLoader.build(o.path(), () -> {
            try {
                return RetryPolicyConfig.builder().retryOn(RetryOn.FIVE_XX).numRetries(num).perTryTimeout(t).build();
            } catch (ConfigException e) {
                throw e.path().equals("per_try_timeout") ? new ConfigException("retry_timeout", e.value(), e.expected()) : e;
            }
        });
    }

    /**
     * MOSN's cluster {@code circuit_breakers}: thresholds (a list, or {@code {"thresholds": [...]}}) of
     * {@code max_connections}, {@code max_pending_requests}, {@code max_requests}, {@code max_retries}
     * for priority DEFAULT; 0 or absent = the default. {@code max_retries} N becomes a retry budget of
     * 0 % with at least N concurrent retries (Envoy's static retry limit).
     */
    static CircuitBreakerConfig mosnCircuitBreakers(JsonNode n, String path) {
        if (n == null) {
            return null;
        }
        JsonNode list = n;
        String listPath = path;
        if (n.isObject()) {
            JsonObject o = JsonObject.of(n, path);
            list = o.raw("thresholds");
            listPath = o.at("thresholds");
            o.finish();
            if (list == null) {
                return null;
            }
        }
        if (!list.isArray()) {
            throw new ConfigException(listPath, JsonObject.describe(list), "a list of thresholds");
        }
        CircuitBreakerConfig d = CircuitBreakerConfig.defaults();
        CircuitBreakerConfig out = null;
        for (int i = 0; i < list.size(); i++) {
            JsonObject t = JsonObject.of(list.get(i), listPath + "[" + i + "]");
            String priority = t.string("priority", "DEFAULT");
            if (!priority.equalsIgnoreCase("DEFAULT")) {
                throw new ConfigException(t.at("priority"), priority, "\"DEFAULT\" (routing priorities are not supported)");
            }
            if (out != null) {
                throw new ConfigException(t.path(), "a second DEFAULT threshold", "one threshold per priority");
            }
            int cx = t.integer("max_connections", 0);
            int pending = t.integer("max_pending_requests", 0);
            int rq = t.integer("max_requests", 0);
            int retries = t.integer("max_retries", 0);
            t.finish();
            CircuitBreakerConfig.Builder b = d.toBuilder();
            if (cx != 0) {
                b.maxConnections(cx);
            }
            if (pending != 0) {
                b.maxPendingRequests(pending);
            }
            if (rq != 0) {
                b.maxRequests(rq);
            }
            if (retries != 0) {
                b.budgetPercent(0).minRetryConcurrency(retries);
            }
            out = ConfigLoader.build(t.path(), b::build);
        }
        return out;
    }
}
