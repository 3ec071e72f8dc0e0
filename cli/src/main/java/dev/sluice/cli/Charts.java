package dev.sluice.cli;

import java.io.IOException;
import java.nio.file.Path;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;

/** The PNGs the commands draw, with XChart. */
final class Charts {

  static {
    if (System.getProperty("java.awt.headless") == null) {
      System.setProperty("java.awt.headless", "true");
    }
  }

  private Charts() {}

  static XYChart chart(String title, String xTitle, String yTitle) {
    XYChart c =
        new XYChartBuilder()
            .width(900)
            .height(540)
            .title(title)
            .xAxisTitle(xTitle)
            .yAxisTitle(yTitle)
            .build();
    c.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
    c.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
    c.getStyler().setPlotGridLinesVisible(true);
    return c;
  }

  /** Writes the chart as a PNG at {@code file} (the {@code .png} suffix is added if missing). */
  static void save(XYChart chart, Path file) throws IOException {
    String name = file.toString();
    if (name.endsWith(".png")) {
      name = name.substring(0, name.length() - 4);
    }
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      java.nio.file.Files.createDirectories(parent);
    }
    BitmapEncoder.saveBitmap(chart, name, BitmapEncoder.BitmapFormat.PNG);
  }
}
