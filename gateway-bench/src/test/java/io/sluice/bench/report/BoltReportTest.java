package io.sluice.bench.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import javax.imageio.ImageIO;

import static org.assertj.core.api.Assertions.assertThat;

class BoltReportTest {

    private static final String HEADER = "scenario\ttarget\trep\tattempt\trps\tsucceeded\tfailed\tp50_us\tp75_us\tp90_us\tp95_us"
            + "\tp99_us\tmax_us\tproxy_ticks\tproxy_us_per_req\tproxy_cpu_pct\trss_kb\tclient_cpu_pct\tbackend_cpu_pct"
            + "\tforeign_cpu_pct\twall_s\tclean";

    private static String row(String sc, String t, int rep, double rps, double p99, double us, int clean) {
        return String.join("\t", sc, t, "" + rep, "0", "" + rps, "" + (long) (rps * 10), "0", "300", "400", "500", "600",
                "" + p99, "9000", "100", "" + us, "90", "65536", "50", "40", "3", "10.1", "" + clean);
    }

    @Test
    void mediansSkipNoisyRunsAndRatiosAreToMosn(@TempDir Path dir) throws Exception {
        List<String> lines = List.of(HEADER,
                row("max", "gateway", 1, 50000, 900, 10, 1),
                row("max", "gateway", 2, 10000, 9000, 99, 0), // disturbed: must not count
                row("max", "gateway", 3, 52000, 1100, 12, 1),
                row("max", "mosn", 1, 30000, 4000, 30, 1),
                row("rate2000", "gateway", 1, 2000, 800, 40, 1),
                row("rate2000", "mosn", 1, 1900, 2000, 80, 0),
                row("rate2000", "mosn", 2, 1800, 4000, 80, 0));
        List<PerfReport.Cell> cells = PerfReport.cells(PerfReport.parse(lines));
        PerfReport.Cell gw = cells.get(0);
        assertThat(gw.used()).isEqualTo(2);
        assertThat(gw.all()).isEqualTo(3);
        assertThat(gw.usPerReq()).isEqualTo(11.0);
        assertThat(gw.rps()).isEqualTo(51000.0);
        assertThat(gw.p99()).isEqualTo(1000.0);

        PerfReport.Cell noisy = cells.get(3);
        assertThat(noisy.used()).as("no clean run: medians over all, flagged 0/2").isZero();
        assertThat(noisy.p99()).isEqualTo(3000.0);

        String md = PerfReport.markdown(cells, List.of(), "mosn");
        assertThat(md).contains("| gateway | 2/3 | 51000 (50000–52000) | 300 µs | 1.00 ms | 11.0 (10.0–12.0) | 90909 | 2.73× |");
        assertThat(md).contains("| mosn | 1/1 |").contains("| 1.00× |");
        assertThat(md).contains("fixed rate").contains("| gateway | 1/1 | 2000 | 300 µs | 400 µs | 500 µs | 600 µs | 800 µs | 9.00 ms | 0 |");

        Files.write(dir.resolve("runs.tsv"), lines);
        PerfReport.main(new String[] {dir.toString()});
        assertThat(dir.resolve("summary.md")).content().isEqualTo(md);
        BufferedImage png = ImageIO.read(dir.resolve("chart.png").toFile());
        assertThat(png.getWidth()).isGreaterThan(500);
        long coloured = 0;
        for (int x = 0; x < png.getWidth(); x += 2) {
            for (int y = 0; y < png.getHeight(); y += 2) {
                int rgb = png.getRGB(x, y) & 0xffffff;
                if (rgb == 0x4C72B0 || rgb == 0xDD8452) {
                    coloured++;
                }
            }
        }
        assertThat(coloured).as("bars drawn").isGreaterThan(100);
    }
}
