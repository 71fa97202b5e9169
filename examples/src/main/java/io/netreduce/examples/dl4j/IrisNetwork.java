package io.netreduce.examples.dl4j;

import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.weights.WeightInit;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.learning.config.IUpdater;
import org.nd4j.linalg.learning.config.Sgd;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/** The small MultiLayerNetwork both DL4J routes train: 4 → hidden (tanh) → 3 (softmax). */
public final class IrisNetwork {

    private IrisNetwork() {
    }

    public static MultiLayerNetwork build(Dl4jConfig config) {
        MultiLayerConfiguration conf = new NeuralNetConfiguration.Builder()
                .seed(config.seed())
                .dataType(DataType.FLOAT)
                .weightInit(WeightInit.XAVIER)
                .updater(updater(config))
                .list()
                .layer(new DenseLayer.Builder().nIn(IrisData.FEATURES).nOut(config.hidden())
                        .activation(Activation.TANH).build())
                .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT)
                        .nIn(config.hidden()).nOut(IrisData.CLASSES).activation(Activation.SOFTMAX).build())
                .build();
        MultiLayerNetwork net = new MultiLayerNetwork(conf);
        net.init();
        return net;
    }

    private static IUpdater updater(Dl4jConfig config) {
        return switch (config.updater()) {
            case "adam" -> new Adam(config.learningRate());
            case "sgd" -> new Sgd(config.learningRate());
            default -> throw new IllegalArgumentException("updater must be adam or sgd, got '" + config.updater() + "'");
        };
    }
}
