package io.netreduce.sim.model;

import java.util.ArrayList;
import java.util.List;

/**
 * The study's documented compute inputs.
 *
 * <p>Sustained throughput: a V100 SXM2 peaks at 125 TFLOP/s on tensor cores (mixed precision)
 * and 15.7 TFLOP/s in FP32 (NVIDIA Tesla V100 datasheet). Training with automatic mixed
 * precision keeps FP32 master weights and gradients, so gradients stay 4 bytes per parameter.
 * The default of 25 TFLOP/s (20 % of the tensor-core peak) makes ResNet-50 train at about
 * 1,000 images/s per GPU, the order NVIDIA publishes for ResNet-50 v1.5 with AMP on V100; it is
 * an input, not a measurement, and can be changed on the command line.
 *
 * <p>Batches per GPU: AlexNet 128 (Krizhevsky et al. 2012), VGG16 and ResNet-50 64, BERT 32
 * (base) and 16 (large) sequences of 128 tokens (pre-training phase 1), GPT-2 8 (small) and 4
 * (medium) sequences of 1024 tokens, sizes that fit a 16 GB V100.
 */
public final class DefaultWorkloads {

    public static final double V100_AMP_SUSTAINED_FLOPS = 25e12;

    private DefaultWorkloads() {
    }

    public static List<Workload> all(double sustainedFlops) {
        List<Workload> w = new ArrayList<>();
        w.add(new Workload(ModelZoo.alexNet(), 128, sustainedFlops, 4));
        w.add(new Workload(ModelZoo.vgg16(), 64, sustainedFlops, 4));
        w.add(new Workload(ModelZoo.resNet50(), 64, sustainedFlops, 4));
        w.add(new Workload(ModelZoo.bertBase(), 32, sustainedFlops, 4));
        w.add(new Workload(ModelZoo.bertLarge(), 16, sustainedFlops, 4));
        w.add(new Workload(ModelZoo.gpt2Small(), 8, sustainedFlops, 4));
        w.add(new Workload(ModelZoo.gpt2Medium(), 4, sustainedFlops, 4));
        return w;
    }
}
