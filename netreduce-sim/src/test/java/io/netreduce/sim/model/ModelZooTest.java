package io.netreduce.sim.model;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Parameter counts computed from the layer structure must equal the reference implementations' counts. */
class ModelZooTest {

    @Test
    void parameterCountsMatchReferenceImplementations() {
        // torchvision.models: alexnet, vgg16, resnet50 (sum of p.numel() for p in parameters()).
        assertEquals(61_100_840L, ModelZoo.alexNet().parameters());
        assertEquals(138_357_544L, ModelZoo.vgg16().parameters());
        assertEquals(25_557_032L, ModelZoo.resNet50().parameters());
        // Hugging Face BertModel (bert-base/large-uncased) and GPT2Model (gpt2, gpt2-medium).
        assertEquals(109_482_240L, ModelZoo.bertBase().parameters());
        assertEquals(335_141_888L, ModelZoo.bertLarge().parameters());
        assertEquals(124_439_808L, ModelZoo.gpt2Small().parameters());
        assertEquals(354_823_168L, ModelZoo.gpt2Medium().parameters());
    }

    @Test
    void forwardFlopsMatchPublishedMultiplyAccumulateCounts() {
        // Widely quoted forward MACs at 224×224: AlexNet 0.71 G, VGG16 15.5 G, ResNet-50 4.1 G.
        assertClose(2 * 0.714e9, ModelZoo.alexNet().forwardFlopsPerSample(), 0.02, "AlexNet");
        assertClose(2 * 15.47e9, ModelZoo.vgg16().forwardFlopsPerSample(), 0.02, "VGG16");
        assertClose(2 * 4.09e9, ModelZoo.resNet50().forwardFlopsPerSample(), 0.03, "ResNet50");
        // Transformers: about 2 FLOPs per parameter per token plus attention.
        double gpt2 = ModelZoo.gpt2Small().forwardFlopsPerSample() / 1024;
        assertTrue(gpt2 > 2 * 85e6 && gpt2 < 2 * 124e6, "GPT-2 small FLOPs per token " + gpt2);
    }

    @Test
    void workloadTimesFollowFromInputs() {
        Workload w = new Workload(ModelZoo.resNet50(), 64, 25e12, 4);
        assertEquals(ModelZoo.resNet50().parameters() * 4.0, w.gradientBytes(), 0);
        double images = 64 / w.computeSeconds();
        assertTrue(images > 800 && images < 1300, "ResNet-50 images/s at the default throughput: " + images);
        // No overlap: compute + comm. Ideal overlap hides comm up to the backward pass.
        assertEquals(w.computeSeconds() + 0.01, w.iterationSeconds(0.01), 1e-12);
        assertEquals(w.computeSeconds(), w.overlappedIterationSeconds(w.backwardSeconds() / 2), 1e-12);
        assertEquals(w.computeSeconds() / 3 + 1.0, w.overlappedIterationSeconds(1.0), 1e-12);
    }

    @Test
    void unknownModelAndBadInputsAreExplained() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ModelZoo.byName("LeNet"));
        assertTrue(e.getMessage().contains("LeNet") && e.getMessage().contains("ResNet50"), e.getMessage());
        assertEquals("GPT-2 medium", ModelZoo.byName("gpt-2 medium").name());
        assertThrows(IllegalArgumentException.class, () -> new Workload(ModelZoo.alexNet(), 0, 1e12, 4));
        assertThrows(IllegalArgumentException.class, () -> new CnnBuilder("tiny", 3, 4, 4).conv(8, 7, 1, 0, true));
    }

    private static void assertClose(double expected, double actual, double tolerance, String what) {
        assertTrue(Math.abs(actual - expected) / expected <= tolerance, what + ": " + actual + " vs " + expected);
    }
}
