package io.netreduce.sim.model;

import java.util.List;

/**
 * The evaluated models, each built from its published layer structure, so gradient sizes are
 * computed, not typed in. Image models follow torchvision's definitions at 224×224 (AlexNet
 * with the single-tower layout, ResNet-50 v1.5); BERT counts the encoder with embeddings and
 * pooler (Hugging Face BertModel); GPT-2 follows the released configurations (tied input and
 * output embeddings).
 */
public final class ModelZoo {

    private ModelZoo() {
    }

    public static List<Architecture> all() {
        return List.of(alexNet(), vgg16(), resNet50(), bertBase(), bertLarge(), gpt2Small(), gpt2Medium());
    }

    public static Architecture byName(String name) {
        for (Architecture a : all()) {
            if (a.name().equalsIgnoreCase(name) || a.name().replace("-", "").equalsIgnoreCase(name.replace("-", ""))) {
                return a;
            }
        }
        throw new IllegalArgumentException("unknown model '" + name + "'; known: "
                + all().stream().map(Architecture::name).toList());
    }

    public static Architecture alexNet() {
        return new CnnBuilder("AlexNet", 3, 224, 224)
                .conv(64, 11, 4, 2, true).maxPool(3, 2, 0)
                .conv(192, 5, 1, 2, true).maxPool(3, 2, 0)
                .conv(384, 3, 1, 1, true)
                .conv(256, 3, 1, 1, true)
                .conv(256, 3, 1, 1, true).maxPool(3, 2, 0)
                .adaptivePool(6, 6)
                .fullyConnected(4096).fullyConnected(4096).fullyConnected(1000)
                .build();
    }

    public static Architecture vgg16() {
        CnnBuilder b = new CnnBuilder("VGG16", 3, 224, 224);
        int[][] stages = {{64, 64}, {128, 128}, {256, 256, 256}, {512, 512, 512}, {512, 512, 512}};
        for (int[] stage : stages) {
            for (int c : stage) {
                b.conv(c, 3, 1, 1, true);
            }
            b.maxPool(2, 2, 0);
        }
        return b.adaptivePool(7, 7).fullyConnected(4096).fullyConnected(4096).fullyConnected(1000).build();
    }

    /** ResNet-50 v1.5: bottleneck blocks [3, 4, 6, 3], stride on the 3×3 convolution. */
    public static Architecture resNet50() {
        CnnBuilder b = new CnnBuilder("ResNet50", 3, 224, 224)
                .conv(64, 7, 2, 3, false).batchNorm().maxPool(3, 2, 1);
        int[] blocks = {3, 4, 6, 3};
        int[] widths = {64, 128, 256, 512};
        for (int stage = 0; stage < 4; stage++) {
            for (int block = 0; block < blocks[stage]; block++) {
                int stride = (block == 0 && stage > 0) ? 2 : 1;
                int in = b.channels();
                int out = widths[stage] * 4;
                if (block == 0) {
                    // Projection shortcut: 1×1 conv with the block's stride, then batch norm.
                    CnnBuilder shortcut = new CnnBuilder("shortcut", in, b.height(), b.width())
                            .conv(out, 1, stride, 0, false).batchNorm();
                    b.addBranch(shortcut.parameters(), shortcut.macs());
                }
                b.conv(widths[stage], 1, 1, 0, false).batchNorm()
                        .conv(widths[stage], 3, stride, 1, false).batchNorm()
                        .conv(out, 1, 1, 0, false).batchNorm();
            }
        }
        return b.adaptivePool(1, 1).fullyConnected(1000).build();
    }

    public static Architecture bertBase() {
        return new Transformer("BERT-base", 30522, 512, 2, 768, 12, 3072, true, true, 128).build();
    }

    public static Architecture bertLarge() {
        return new Transformer("BERT-large", 30522, 512, 2, 1024, 24, 4096, true, true, 128).build();
    }

    public static Architecture gpt2Small() {
        return new Transformer("GPT-2 small", 50257, 1024, 0, 768, 12, 3072, false, false, 1024).build();
    }

    public static Architecture gpt2Medium() {
        return new Transformer("GPT-2 medium", 50257, 1024, 0, 1024, 24, 4096, false, false, 1024).build();
    }
}
