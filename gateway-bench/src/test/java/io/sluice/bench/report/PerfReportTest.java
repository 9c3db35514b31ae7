package io.sluice.bench.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class PerfReportTest {

    private static final String HEADER = "scenario\ttarget\trep\tattempt\trps\tsucceeded\tfailed\tp50_us\tp75_us\tp90_us\tp95_us"
            + "\tp99_us\tmax_us\tproxy_ticks\tproxy_us_per_req\tproxy_cpu_pct\trss_kb\tclient_cpu_pct\tbackend_cpu_pct"
            + "\tforeign_cpu_pct\twall_s\tclean";

    private static String row(String sc, String t, int rep, double rps, double us, int clean) {
        return String.join("\t", sc, t, String.valueOf(rep), "0", String.valueOf(rps), "1000", "0", "500", "600", "700",
                "800", "900", "1000", "100", String.valueOf(us), "50", "20480", "90", "40", "3", "10", String.valueOf(clean));
    }

    @Test
    void mediansOverCleanRunsAndRatiosToTheBaseline() throws Exception {
        List<PerfReport.Run> runs = PerfReport.parse(List.of(HEADER,
                row("percore64", "nginx", 1, 30000, 20, 1), row("percore64", "nginx", 2, 31000, 22, 1),
                row("percore64", "nginx", 3, 10000, 90, 0), // disturbed: left out of the medians
                row("percore64", "gateway", 1, 29000, 25, 1), row("percore64", "gateway", 2, 28000, 24, 1),
                row("rate2000", "gateway", 1, 2000, 100, 1)));
        List<PerfReport.Cell> cells = PerfReport.cells(runs);
        PerfReport.Cell nginx = cells.get(0);
        assertThat(nginx.used()).isEqualTo(2);
        assertThat(nginx.all()).isEqualTo(3);
        assertThat(nginx.usPerReq()).isEqualTo(21.0);
        String md = PerfReport.markdown(cells, List.of(), "nginx");
        assertThat(md).contains("per core vs nginx", "| nginx | 2/3 |", "| gateway | 2/2 |", "0.86×", "rate2000: fixed rate");
    }

    @Test
    void aRunWhoseLoadGeneratorPrintedNothingParsesAsMissingFigures() {
        String broken = String.join("\t", "percore512", "direct", "3", "0", "0", "0", "0", "-", "", "", "", "", "", "0",
                "0.0", "0.0", "0", "0.0", "0.0", "293.3", "0.0", "0");
        List<PerfReport.Run> runs = PerfReport.parse(List.of(HEADER, broken, row("percore512", "direct", 1, 30000, 0, 1)));
        assertThat(runs).hasSize(2);
        assertThat(runs.get(0).p50()).isNaN();
        assertThat(PerfReport.cells(runs).get(0).used()).isEqualTo(1);
    }

    @Test
    void writesSummaryAndChart(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("runs.tsv"), String.join("\n", HEADER, row("max", "mosn", 1, 30000, 30, 1),
                row("max", "gateway", 1, 40000, 10, 1), row("max500", "mosn", 1, 18000, 54, 1),
                row("max500", "gateway", 1, 52000, 16, 1)) + "\n");
        PerfReport.main(new String[] {dir.toString()});
        String md = Files.readString(dir.resolve("summary.md"));
        assertThat(md).contains("per core vs mosn", "3.00×", "### max500: maximum throughput over 500 client connections");
        // each scenario's ratio is against the baseline in the same scenario
        assertThat(md.substring(md.indexOf("### max500"))).contains("3.38×").doesNotContain("3.00×");
        assertThat(Files.size(dir.resolve("chart.png"))).isGreaterThan(1000);
    }

    /** A baseline whose CPU per request drifts within the run: the median ratio, and the one against its best run. */
    @Test
    void ratioAgainstTheBaselinesBestRepetition() throws Exception {
        List<PerfReport.Run> runs = PerfReport.parse(List.of(HEADER,
                row("max", "mosn", 1, 30000, 30, 1), row("max", "mosn", 2, 24000, 40, 1), row("max", "mosn", 3, 24000, 41, 1),
                row("max", "gateway", 1, 60000, 12, 1), row("max", "gateway", 2, 60000, 11, 1), row("max", "gateway", 3, 60000, 11, 1)));
        String md = PerfReport.markdown(PerfReport.cells(runs), List.of(), "mosn");
        assertThat(md).contains("per core vs mosn | vs mosn's best run |",
                "| gateway | 3/3 | 60000 (60000–60000) | 500 µs | 900 µs | 11.0 (11.0–12.0) | 90909 | 3.64× | 2.73× |",
                "| mosn | 3/3 | 24000 (24000–30000) | 500 µs | 900 µs | 40.0 (30.0–41.0) | 25000 | 1.00× | 0.75× |");
    }
}
