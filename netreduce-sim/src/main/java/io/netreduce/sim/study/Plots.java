package io.netreduce.sim.study;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.XYStyler;
import org.knowm.xchart.style.markers.SeriesMarkers;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Line charts of the sweeps, written as PNG with XChart (headless: no display is needed). */
public final class Plots {

    private static final Color[] PALETTE = {
            new Color(0xD62728), new Color(0x1F77B4), new Color(0x2CA02C), new Color(0x9467BD),
            new Color(0xFF7F0E), new Color(0x8C564B), new Color(0x17BECF)};

    private Plots() {
    }

    /** A named series of (x, y) points. */
    public record Series(String name, double[] x, double[] y) {
    }

    /**
     * Writes {@code file} as a PNG line chart with markers; {@code logX} and {@code logY} pick
     * logarithmic axes.
     */
    public static void line(Path file, String title, String xTitle, String yTitle, boolean logX, boolean logY,
                            Iterable<Series> series) throws IOException {
        System.setProperty("java.awt.headless", "true");
        XYChart chart = new XYChartBuilder().width(900).height(560).title(title).xAxisTitle(xTitle).yAxisTitle(yTitle).build();
        XYStyler st = chart.getStyler();
        st.setChartBackgroundColor(Color.WHITE);
        st.setPlotBackgroundColor(Color.WHITE);
        st.setPlotGridLinesColor(new Color(0xDDDDDD));
        st.setLegendPosition(Styler.LegendPosition.InsideNW);
        st.setLegendBackgroundColor(new Color(255, 255, 255, 220));
        st.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        st.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        st.setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        st.setAxisTickLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        st.setSeriesColors(PALETTE);
        st.setMarkerSize(7);
        st.setXAxisLogarithmic(logX);
        st.setYAxisLogarithmic(logY);
        // Label the y axis between decades too (the curves often span less than two decades); the
        // x axis keeps decade labels only, which would otherwise overlap.
        st.setXAxisLogarithmicDecadeOnly(true);
        st.setYAxisLogarithmicDecadeOnly(false);
        st.setXAxisDecimalPattern("#,##0.###");
        st.setYAxisDecimalPattern("#,##0.##");
        int count = 0;
        for (Series ser : series) {
            XYSeries xy = chart.addSeries(ser.name(), ser.x(), ser.y());
            xy.setMarker(SeriesMarkers.CIRCLE);
            xy.setLineStyle(new BasicStroke(2.2f));
            count++;
        }
        if (count == 0) {
            throw new IllegalArgumentException("plot '" + title + "' has no series");
        }
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    /** Groups rows by series name, keeping first-seen order. */
    static Map<String, double[][]> collect(Map<String, List<double[]>> points) {
        Map<String, double[][]> out = new LinkedHashMap<>();
        points.forEach((name, pts) -> {
            double[] x = new double[pts.size()];
            double[] y = new double[pts.size()];
            for (int k = 0; k < pts.size(); k++) {
                x[k] = pts.get(k)[0];
                y[k] = pts.get(k)[1];
            }
            out.put(name, new double[][]{x, y});
        });
        return out;
    }
}
