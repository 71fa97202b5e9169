package io.netreduce.examples;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * What one worker ends a training run with: the loss after each epoch (over the whole
 * data set, gathered from every worker) and its final parameters, flattened.
 */
public record TrainingResult(int rank, int worldSize, double[] epochLoss, float[] parameters) {

    public double finalLoss() {
        return epochLoss[epochLoss.length - 1];
    }

    /** SHA-256 over the parameters' IEEE bits: equal digests mean bitwise-identical replicas. */
    public String parameterDigest() {
        return digest(parameters);
    }

    public static String digest(float[] values) {
        ByteBuffer bytes = ByteBuffer.allocate(values.length * Float.BYTES);
        for (float v : values) {
            bytes.putInt(Float.floatToRawIntBits(v));
        }
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes.array()));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JVM", e);
        }
    }

    /** Relative difference of the final losses, |a - b| / |b|. */
    public static double relativeLossGap(TrainingResult run, TrainingResult reference) {
        return Math.abs(run.finalLoss() - reference.finalLoss()) / Math.abs(reference.finalLoss());
    }
}
