import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * Draws docs/bench/cost.sh's tables as bars (the rows of every table in the file, a name once):
 * each row's CPU per request, the server's and the store's stacked. Run as a source file with XChart on the class path:
 *
 * <pre>
 * java -cp ~/.m2/repository/org/knowm/xchart/xchart/3.8.8/xchart-3.8.8.jar \
 *   docs/bench/CostChart.java docs/bench/cost.md docs/bench/cost.png
 * </pre>
 */
public class CostChart {
  public static void main(String[] args) throws Exception {
    System.setProperty("java.awt.headless", "true");
    List<String> names = new ArrayList<>();
    List<Double> server = new ArrayList<>();
    List<Double> memcached = new ArrayList<>();
    for (String line : Files.readAllLines(Path.of(args[0]))) {
      String[] cells = line.split("\\|");
      if (cells.length < 6 || !cells[2].trim().matches("[0-9.]+")) {
        continue;
      }
      String name = cells[1].trim().replace("Jersey on Grizzly", "Grizzly").replace("servlet on ", "");
      if (names.contains(name)) {
        continue; // a row of a later table in the file: the first is drawn
      }
      names.add(name);
      server.add(Double.parseDouble(cells[2].trim()));
      String mc = cells[4].trim();
      memcached.add(mc.isEmpty() ? 0.0 : Double.parseDouble(mc));
    }
    CategoryChart c =
        new CategoryChartBuilder()
            .width(1000)
            .height(820)
            .title("CPU per request (docs/bench/cost.sh)")
            .yAxisTitle("µs of CPU per request")
            .build();
    c.getStyler().setStacked(true);
    c.getStyler().setXAxisLabelRotation(90);
    c.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
    c.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
    c.addSeries("server process", names, server);
    c.addSeries("store (memcached or redis)", names, memcached);
    String out = args[1].endsWith(".png") ? args[1].substring(0, args[1].length() - 4) : args[1];
    BitmapEncoder.saveBitmap(c, out, BitmapEncoder.BitmapFormat.PNG);
  }
}
