package io.sluice.bench.report;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

import javax.imageio.ImageIO;

/**
 * {@code perf-report [--baseline NAME] DIR}: turns the {@code runs.tsv} written by the scenario
 * scripts ({@code scripts/bolt-peers.sh}, {@code scripts/http-peers.sh}) into {@code summary.md}
 * (medians over the clean repetitions, requests per proxy CPU-second and their ratio to the baseline
 * target, e.g. MOSN or nginx) and {@code chart.png} (proxy CPU per request per scenario, and the
 * latency percentiles of the fixed-rate runs), drawn with Java2D so no plotting dependency is
 * needed. {@code bolt-report DIR} is {@code perf-report --baseline mosn DIR}.
 */
public final class PerfReport {

    /** One row of runs.tsv. */
    public record Run(String scenario, String target, int rep, double rps, long succeeded, long failed,
                      double p50, double p75, double p90, double p95, double p99, double max,
                      double proxyUsPerReq, double proxyCpuPct, long rssKb, double foreignPct, boolean clean) {
    }

    /** Medians of one (scenario, target) cell. */
    public record Cell(String scenario, String target, int used, int all, double rps, double rpsMin, double rpsMax,
                       double p50, double p75, double p90, double p95, double p99, double max, double usPerReq,
                       double usMin, double usMax, double cpuPct, double rssKb, long failed, double maxForeign) {
        /** Requests per second of proxy CPU (0 without a proxy). */
        public double perCore() {
            return usPerReq > 0 ? 1e6 / usPerReq : 0;
        }
    }

    private PerfReport() {
    }

    public static void main(String[] args) throws IOException {
        String baseline = "mosn";
        List<String> rest = new ArrayList<>(Arrays.asList(args));
        if (rest.size() >= 2 && rest.get(0).equals("--baseline")) {
            baseline = rest.get(1);
            rest = rest.subList(2, rest.size());
        }
        if (rest.size() != 1) {
            System.err.println("usage: perf-report [--baseline TARGET] DIR   (DIR holds runs.tsv from a scenario script)");
            System.exit(2);
        }
        Path dir = Path.of(rest.get(0));
        List<Run> runs = parse(Files.readAllLines(dir.resolve("runs.tsv"), StandardCharsets.UTF_8));
        List<Cell> cells = cells(runs);
        Path syscalls = dir.resolve("syscalls.tsv");
        List<String> sys = Files.exists(syscalls) ? Files.readAllLines(syscalls) : List.of();
        Files.writeString(dir.resolve("summary.md"), markdown(cells, sys, baseline));
        ImageIO.write(chart(cells), "png", dir.resolve("chart.png").toFile());
        System.out.print(Files.readString(dir.resolve("summary.md")));
    }

    /** Parses runs.tsv (header line first; columns found by name). */
    /** A runs.tsv cell as a number; empty or not a number (e.g. "-" from a load generator that printed nothing) is NaN. */
    static double number(String cell) {
        if (cell.isEmpty()) {
            return Double.NaN;
        }
        try {
            return Double.parseDouble(cell);
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    public static List<Run> parse(List<String> lines) {
        if (lines.isEmpty()) {
            return List.of();
        }
        List<String> h = Arrays.asList(lines.get(0).split("\t"));
        List<Run> out = new ArrayList<>();
        for (String line : lines.subList(1, lines.size())) {
            if (line.isBlank()) {
                continue;
            }
            String[] c = line.split("\t", -1);
            ToDoubleFunction<String> d = name -> {
                int i = h.indexOf(name);
                return i < 0 || i >= c.length ? Double.NaN : number(c[i]);
            };
            out.add(new Run(c[h.indexOf("scenario")], c[h.indexOf("target")], (int) d.applyAsDouble("rep"),
                    d.applyAsDouble("rps"), (long) d.applyAsDouble("succeeded"), (long) d.applyAsDouble("failed"),
                    d.applyAsDouble("p50_us"), d.applyAsDouble("p75_us"), d.applyAsDouble("p90_us"),
                    d.applyAsDouble("p95_us"), d.applyAsDouble("p99_us"), d.applyAsDouble("max_us"),
                    d.applyAsDouble("proxy_us_per_req"), d.applyAsDouble("proxy_cpu_pct"), (long) d.applyAsDouble("rss_kb"),
                    d.applyAsDouble("foreign_cpu_pct"), d.applyAsDouble("clean") == 1));
        }
        return out;
    }

    /** Groups by (scenario, target) in first-seen order; medians over clean runs, or all runs if none is clean. */
    public static List<Cell> cells(List<Run> runs) {
        Map<String, List<Run>> groups = new LinkedHashMap<>();
        for (Run r : runs) {
            groups.computeIfAbsent(r.scenario() + "\t" + r.target(), k -> new ArrayList<>()).add(r);
        }
        List<Cell> out = new ArrayList<>();
        for (List<Run> all : groups.values()) {
            List<Run> used = all.stream().filter(Run::clean).toList();
            int clean = used.size();
            if (used.isEmpty()) {
                used = all; // every repetition disturbed: still report them, flagged by "0/n"
            }
            Run first = all.get(0);
            out.add(new Cell(first.scenario(), first.target(), clean, all.size(),
                    median(used, Run::rps), min(used, Run::rps), max(used, Run::rps),
                    median(used, Run::p50), median(used, Run::p75), median(used, Run::p90), median(used, Run::p95),
                    median(used, Run::p99), median(used, Run::max), median(used, Run::proxyUsPerReq),
                    min(used, Run::proxyUsPerReq), max(used, Run::proxyUsPerReq), median(used, Run::proxyCpuPct),
                    median(used, r -> r.rssKb()), used.stream().mapToLong(Run::failed).sum(),
                    max(all, Run::foreignPct)));
        }
        return out;
    }

    static double median(List<Run> runs, ToDoubleFunction<Run> f) {
        double[] v = runs.stream().mapToDouble(f).filter(x -> !Double.isNaN(x)).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static double min(List<Run> runs, ToDoubleFunction<Run> f) {
        return runs.stream().mapToDouble(f).filter(x -> !Double.isNaN(x)).min().orElse(Double.NaN);
    }

    private static double max(List<Run> runs, ToDoubleFunction<Run> f) {
        return runs.stream().mapToDouble(f).filter(x -> !Double.isNaN(x)).max().orElse(Double.NaN);
    }

    /** The Markdown summary. */
    public static String markdown(List<Cell> cells, List<String> syscalls, String baseline) {
        StringBuilder sb = new StringBuilder();
        for (String sc : scenarios(cells)) {
            List<Cell> cs = cells.stream().filter(c -> c.scenario().equals(sc)).toList();
            Cell base = cs.stream().filter(c -> c.target().startsWith(baseline)).findFirst().orElse(null);
            if (sc.startsWith("rate")) {
                sb.append("### ").append(sc).append(": fixed rate (latency distribution, medians)\n\n");
                sb.append("| target | n clean/all | req/s | p50 | p75 | p90 | p95 | p99 | max | failed | proxy CPU µs/req | proxy RSS MiB | max foreign CPU % |\n");
                sb.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
                for (Cell c : cs) {
                    sb.append(String.format(Locale.ROOT, "| %s | %d/%d | %.0f | %s | %s | %s | %s | %s | %s | %d | %s | %s | %.0f |%n",
                            c.target(), c.used(), c.all(), c.rps(), ms(c.p50()), ms(c.p75()), ms(c.p90()), ms(c.p95()),
                            ms(c.p99()), ms(c.max()), c.failed(), us(c), rss(c), c.maxForeign()));
                }
            } else {
                sb.append("### ").append(sc).append(switch (sc) {
                    case "sidecar" -> ": client → proxy → proxy → server, both proxies on CPU 0 (medians)";
                    case "max" -> ": maximum throughput, proxy pinned to CPU 0 (medians)";
                    case "max500" -> ": maximum throughput over 500 client connections (the MOSN 0.2.1 report's load), "
                            + "proxy pinned to CPU 0 (medians)";
                    default -> sc.startsWith("churn") ? ": a new connection per request (medians)"
                            : sc.startsWith("scaleout") ? ": backends behind the proxy, proxy unpinned (medians)"
                            : ": proxy pinned to CPU 0 (medians)";
                }).append(" — commands in meta.txt\n\n");
                // the median against the baseline's median, and against its best repetition (the
                // conservative figure when the baseline's own CPU per request drifts within the run)
                sb.append("| target | n clean/all | req/s (min–max) | p50 | p99 | proxy CPU µs/req (min–max) | requests per proxy CPU-s | per core vs ")
                        .append(baseline).append(" | vs ").append(baseline)
                        .append("'s best run | proxy CPU % | proxy RSS MiB | failed | max foreign CPU % |\n");
                sb.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
                for (Cell c : cs) {
                    boolean comparable = base != null && c.perCore() > 0 && base.perCore() > 0;
                    String ratio = comparable ? String.format(Locale.ROOT, "%.2f×", c.perCore() / base.perCore()) : "–";
                    String best = comparable && base.usMin() > 0
                            ? String.format(Locale.ROOT, "%.2f×", base.usMin() / c.usPerReq()) : "–";
                    sb.append(String.format(Locale.ROOT, "| %s | %d/%d | %.0f (%.0f–%.0f) | %s | %s | %s | %s | %s | %s | %s | %s | %d | %.0f |%n",
                            c.target(), c.used(), c.all(), c.rps(), c.rpsMin(), c.rpsMax(), ms(c.p50()), ms(c.p99()),
                            c.usPerReq() > 0 ? String.format(Locale.ROOT, "%.1f (%.1f–%.1f)", c.usPerReq(), c.usMin(), c.usMax()) : "–",
                            c.perCore() > 0 ? String.format(Locale.ROOT, "%.0f", c.perCore()) : "–", ratio, best,
                            c.usPerReq() > 0 ? String.format(Locale.ROOT, "%.0f", c.cpuPct()) : "–", rss(c), c.failed(),
                            c.maxForeign()));
                }
            }
            sb.append('\n');
        }
        if (syscalls.size() > 1) {
            sb.append("### System calls per request (perf stat on the proxy, one extra max-load run each)\n\n");
            List<String> h = Arrays.asList(syscalls.get(0).split("\t"));
            sb.append("| ").append(String.join(" | ", h)).append(" |\n|").append("---|".repeat(h.size())).append('\n');
            for (String l : syscalls.subList(1, syscalls.size())) {
                sb.append("| ").append(String.join(" | ", l.split("\t"))).append(" |\n");
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    private static List<String> scenarios(List<Cell> cells) {
        return cells.stream().map(Cell::scenario).distinct().toList();
    }

    private static String ms(double micros) {
        if (Double.isNaN(micros)) {
            return "–";
        }
        return micros < 1000 ? String.format(Locale.ROOT, "%.0f µs", micros) : String.format(Locale.ROOT, "%.2f ms", micros / 1000);
    }

    private static String us(Cell c) {
        return c.usPerReq() > 0 ? String.format(Locale.ROOT, "%.1f", c.usPerReq()) : "–";
    }

    private static String rss(Cell c) {
        return c.usPerReq() > 0 && c.rssKb() > 0 ? String.format(Locale.ROOT, "%.0f", c.rssKb() / 1024) : "–";
    }

    // ------------------------------------------------------------------------------------- chart

    private static final Color[] PALETTE = {new Color(0x4C72B0), new Color(0xDD8452), new Color(0x55A868),
        new Color(0xC44E52), new Color(0x8172B3), new Color(0x937860)};

    /** Left: proxy CPU µs per request at maximum load (and sidecar); right: fixed-rate p50/p90/p99. */
    public static BufferedImage chart(List<Cell> cells) {
        int w = 1100;
        int h = 460;
        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, w, h);
        List<String[]> labels = new ArrayList<>();
        List<double[]> values = new ArrayList<>();
        List<String> targets = new ArrayList<>();
        for (Cell c : cells) {
            if (!c.scenario().startsWith("rate") && c.usPerReq() > 0) {
                // one colour per target (legend), the scenario and the throughput under each bar
                labels.add(new String[] {c.scenario(), kilo(c.rps())});
                values.add(new double[] {c.usPerReq()});
                targets.add(c.target());
            }
        }
        bars(g, 20, 20, w / 2 - 30, h - 40, "Proxy CPU per request, µs (lower is better)", labels, values,
                new String[] {"µs/request"}, targets);
        labels = new ArrayList<>();
        values = new ArrayList<>();
        for (Cell c : cells) {
            if (c.scenario().startsWith("rate")) {
                labels.add(new String[] {c.target(), c.scenario(), String.format(Locale.ROOT, "%.0f req/s", c.rps())});
                values.add(new double[] {c.p50() / 1000, c.p90() / 1000, c.p99() / 1000});
            }
        }
        bars(g, w / 2 + 10, 20, w / 2 - 30, h - 40, "Latency at a fixed rate, ms", labels, values,
                new String[] {"p50", "p90", "p99"}, null);
        g.dispose();
        return img;
    }

    /** "71.1k/s" (or "950/s") requests per second: fits under a bar when many stand side by side. */
    static String kilo(double rps) {
        return rps >= 10_000 ? String.format(Locale.ROOT, "%.1fk/s", rps / 1000) : String.format(Locale.ROOT, "%.0f/s", rps);
    }

    /**
     * Grouped bars. {@code keys} (single series only, else null): the bar colours follow the key,
     * each key once in a legend, in order of first appearance.
     */
    private static void bars(Graphics2D g, int x, int y, int w, int h, String title, List<String[]> labels,
                             List<double[]> values, String[] series, List<String> keys) {
        List<String> distinct = keys == null ? List.of() : keys.stream().distinct().toList();
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
        g.drawString(title, x + 10, y + 16);
        if (values.isEmpty()) {
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            g.drawString("(no data)", x + 10, y + 40);
            return;
        }
        double top = values.stream().flatMapToDouble(Arrays::stream).filter(v -> !Double.isNaN(v)).max().orElse(1);
        top = niceCeiling(top);
        int left = x + 50;
        int bottom = y + h - 50;
        int plotTop = y + 50;
        int plotW = w - 60;
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        for (int i = 0; i <= 4; i++) {
            int yy = bottom - (bottom - plotTop) * i / 4;
            g.setColor(new Color(0xDDDDDD));
            g.drawLine(left, yy, left + plotW, yy);
            g.setColor(Color.DARK_GRAY);
            g.drawString(fmt(top * i / 4), x + 5, yy + 4);
        }
        int groups = values.size();
        int groupW = plotW / groups;
        int barW = Math.max(6, (groupW - 20) / series.length);
        for (int gi = 0; gi < groups; gi++) {
            double[] v = values.get(gi);
            int gx = left + gi * groupW + 10;
            for (int s = 0; s < v.length; s++) {
                if (Double.isNaN(v[s])) {
                    continue;
                }
                int bh = (int) Math.round((bottom - plotTop) * Math.min(1, v[s] / top));
                int colour = keys != null ? distinct.indexOf(keys.get(gi))
                        : series.length == 1 ? gi : s;
                g.setColor(PALETTE[colour % PALETTE.length]);
                g.fillRect(gx + s * barW, bottom - bh, barW - 2, bh);
                g.setColor(Color.BLACK);
                g.drawString(fmt(v[s]), gx + s * barW, bottom - bh - 3);
            }
            g.setColor(Color.BLACK);
            String[] l = labels.get(gi);
            for (int k = 0; k < l.length; k++) {
                g.drawString(l[k], gx, bottom + 15 + 13 * k);
            }
        }
        g.setStroke(new BasicStroke(1));
        g.drawLine(left, bottom, left + plotW, bottom);
        if (series.length > 1) {
            for (int s = 0; s < series.length; s++) {
                g.setColor(PALETTE[s % PALETTE.length]);
                g.fillRect(x + w - 160 + s * 50, y + 26, 10, 10);
                g.setColor(Color.BLACK);
                g.drawString(series[s], x + w - 147 + s * 50, y + 35);
            }
        } else if (keys != null) {
            int lx = x + 10;
            for (int k = 0; k < distinct.size(); k++) {
                g.setColor(PALETTE[k % PALETTE.length]);
                g.fillRect(lx, y + 26, 10, 10);
                g.setColor(Color.BLACK);
                g.drawString(distinct.get(k), lx + 13, y + 35);
                lx += 13 + g.getFontMetrics().stringWidth(distinct.get(k)) + 14;
            }
        }
    }

    private static double niceCeiling(double v) {
        if (!(v > 0)) {
            return 1;
        }
        double p = Math.pow(10, Math.floor(Math.log10(v)));
        for (double m : new double[] {1, 2, 2.5, 5, 10}) {
            if (m * p >= v * 1.05) {
                return m * p;
            }
        }
        return 10 * p;
    }

    private static String fmt(double v) {
        return v >= 100 ? String.format(Locale.ROOT, "%.0f", v) : v >= 10 ? String.format(Locale.ROOT, "%.1f", v)
                : String.format(Locale.ROOT, "%.2f", v);
    }
}
