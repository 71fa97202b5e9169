package io.netreduce.examples.dl4j;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Fisher's Iris data (150 samples, 4 features, 3 classes) read from the copy that
 * deeplearning4j-core ships as the class-path resource {@code iris.dat}. DL4J's own
 * {@code IrisDataSetIterator} downloads the file instead, which an offline build
 * cannot do. Features are standardised with the statistics of the whole set, which
 * every worker computes identically.
 */
public final class IrisData {

    public static final String RESOURCE = "iris.dat";
    public static final int FEATURES = 4;
    public static final int CLASSES = 3;

    private IrisData() {
    }

    public static DataSet load() {
        List<float[]> rows = new ArrayList<>();
        List<Integer> labels = new ArrayList<>();
        try (InputStream in = IrisData.class.getClassLoader().getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " not on the class path: is deeplearning4j-core there?");
            }
            BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII));
            String line;
            int lineNo = 0;
            while ((line = reader.readLine()) != null) {
                lineNo++;
                if (line.isBlank()) {
                    continue;
                }
                String[] cells = line.split(",");
                if (cells.length != FEATURES + 1) {
                    throw new IllegalStateException(RESOURCE + " line " + lineNo + ": expected "
                            + (FEATURES + 1) + " comma-separated cells, got '" + line + "'");
                }
                float[] row = new float[FEATURES];
                for (int f = 0; f < FEATURES; f++) {
                    row[f] = Float.parseFloat(cells[f].trim());
                }
                int label = Integer.parseInt(cells[FEATURES].trim());
                if (label < 0 || label >= CLASSES) {
                    throw new IllegalStateException(RESOURCE + " line " + lineNo + ": label " + label
                            + " outside 0.." + (CLASSES - 1));
                }
                rows.add(row);
                labels.add(label);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + RESOURCE, e);
        }
        int n = rows.size();
        float[][] x = rows.toArray(new float[0][]);
        standardise(x);
        float[][] y = new float[n][CLASSES];
        for (int i = 0; i < n; i++) {
            y[i][labels.get(i)] = 1f;
        }
        INDArray features = Nd4j.create(x).castTo(DataType.FLOAT);
        INDArray oneHot = Nd4j.create(y).castTo(DataType.FLOAT);
        return new DataSet(features, oneHot);
    }

    private static void standardise(float[][] x) {
        for (int f = 0; f < FEATURES; f++) {
            double mean = 0;
            for (float[] row : x) {
                mean += row[f];
            }
            mean /= x.length;
            double var = 0;
            for (float[] row : x) {
                var += (row[f] - mean) * (row[f] - mean);
            }
            double std = Math.sqrt(var / x.length);
            for (float[] row : x) {
                row[f] = (float) ((row[f] - mean) / std);
            }
        }
    }
}
