package io.sluice.server.admin;

import io.sluice.core.cluster.Host;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.policy.BreakerStatus;

import java.util.Locale;
import java.util.Map;

/**
 * The admin API's {@code GET /}: one self-contained HTML page (inline CSS, no scripts, no external
 * assets) a person can read in a browser. It reloads itself every 10 seconds.
 */
final class StatusPage {

    private StatusPage() {
    }

    static String version() {
        String v = StatusPage.class.getPackage().getImplementationVersion();
        return v == null ? "dev" : v;
    }

    static String render(Map<String, ClusterBalancer> clusters, AdminHandler.Status status, boolean ready) {
        StringBuilder b = new StringBuilder(4096);
        b.append("""
                <!DOCTYPE html>
                <html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="10">
                <title>sluice status</title>
                <style>
                body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
                table{border-collapse:collapse;margin:.4em 0 1.2em}
                th,td{border:1px solid #ccc;padding:.2em .6em;text-align:left}
                th{background:#f0f0f0} td.n{text-align:right}
                .bad{color:#b00020;font-weight:bold} .warn{color:#a66300} .ok{color:#1b7f2a}
                code{background:#f4f4f4;padding:0 .2em}
                </style></head><body>
                """);
        b.append("<h1>sluice</h1>\n<p>version <code>").append(esc(version())).append("</code>");
        b.append(" &middot; ").append(ready ? "<span class=\"ok\">ready</span>" : "<span class=\"bad\">not ready (starting or draining)</span>");
        if (status != null) {
            b.append(" &middot; up ").append(esc(duration(status.uptimeMillis())));
            b.append(" &middot; config version ").append(status.configVersion());
        }
        b.append("</p>\n<p>");
        link(b, "/metrics", "metrics");
        link(b, "/clusters", "clusters (JSON)");
        link(b, "/config", "running config (JSON)");
        link(b, "/ready", "ready");
        link(b, "/healthz", "healthz");
        b.append("</p>\n");
        if (status != null) {
            String reload = status.lastReload();
            b.append("<p>last reload: ").append(reload == null ? "none since start" : esc(reload)).append("</p>\n");
            if (!status.metricsOn()) {
                b.append("<p class=\"warn\">metrics recording is off (<code>admin.metrics: false</code>)</p>\n");
            }
            b.append("<h2>Listeners</h2>\n<table><tr><th>name</th><th>protocol</th><th>address</th>"
                    + "<th>connections</th><th>requests in flight</th><th>state</th></tr>\n");
            for (AdminHandler.ListenerInfo l : status.listeners()) {
                b.append("<tr><td>").append(esc(l.name())).append("</td><td>").append(esc(l.protocol()))
                        .append("</td><td>").append(esc(l.address())).append("</td><td class=\"n\">").append(l.connections())
                        .append("</td><td class=\"n\">").append(l.requests()).append("</td><td>")
                        .append(l.draining() ? "<span class=\"warn\">draining</span>" : "serving").append("</td></tr>\n");
            }
            b.append("</table>\n");
        }
        b.append("<h2>Clusters</h2>\n");
        if (clusters.isEmpty()) {
            b.append("<p>none</p>\n");
        }
        for (ClusterBalancer c : clusters.values()) {
            long available = c.hosts().stream().filter(Host::available).count();
            b.append("<h3>").append(esc(c.name())).append("</h3>\n<p>")
                    .append(c.config().protocol().jsonName()).append(", ").append(lower(c.config().lb().name()))
                    .append(", ").append(available).append(" of ").append(c.hosts().size()).append(" hosts available");
            if (c.panicking()) {
                b.append(" &middot; <span class=\"bad\">panic mode</span>");
            }
            b.append(" &middot; ").append(esc(BreakerStatus.line(c))); // resilience
            b.append("</p>\n<table><tr><th>host</th><th>weight</th><th>health</th><th>ejected</th>"
                    + "<th>effective weight</th><th>warm-up</th><th>active requests</th></tr>\n");
            for (Host h : c.hosts()) {
                String health = lower(h.health().name());
                double warm = c.warmUpFactor(h);
                b.append("<tr><td>").append(esc(h.address())).append("</td><td class=\"n\">").append(h.weight())
                        .append("</td><td class=\"").append(health.equals("unhealthy") ? "bad" : "ok").append("\">")
                        .append(health).append("</td><td>")
                        .append(h.ejected() ? "<span class=\"bad\">yes</span>" : "no").append("</td><td class=\"n\">")
                        .append(String.format(Locale.ROOT, "%.3f", c.effectiveWeight(h))).append("</td><td class=\"n\">")
                        .append(warm >= 1.0 ? "done" : String.format(Locale.ROOT, "%.0f %%", warm * 100))
                        .append("</td><td class=\"n\">").append(h.activeRequests()).append("</td></tr>\n");
            }
            b.append("</table>\n");
        }
        b.append("</body></html>\n");
        return b.toString();
    }

    private static void link(StringBuilder b, String href, String text) {
        b.append("<a href=\"").append(href).append("\">").append(esc(text)).append("</a> ");
    }

    private static String lower(String s) {
        return s.toLowerCase(Locale.ROOT);
    }

    static String duration(long millis) {
        long s = millis / 1000;
        long d = s / 86400;
        long h = s % 86400 / 3600;
        long m = s % 3600 / 60;
        return (d > 0 ? d + "d " : "") + (d > 0 || h > 0 ? h + "h " : "") + m + "m " + s % 60 + "s";
    }

    static String esc(String s) {
        StringBuilder b = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '&' -> b.append("&amp;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&#39;");
                default -> b.append(c);
            }
        }
        return b.toString();
    }
}
