package io.netreduce.sim.model;

/**
 * A BERT- or GPT-2-style transformer: token, position (and segment) embeddings, {@code layers}
 * blocks of self-attention and a feed-forward network, each with a layer norm, and either a
 * pooler (BERT) or a final layer norm (GPT-2).
 *
 * <p>Forward FLOPs per token follow Kaplan et al. 2020 (Table 1): 2·N for the non-embedding
 * parameters N plus 2·layers·context·d for attention scores and weighted sums.
 */
record Transformer(String name, int vocabulary, int positions, int segments, int hidden, int layers,
                   int feedForward, boolean postNorm, boolean pooler, int sequenceLength) {

    Architecture build() {
        long d = hidden;
        long embeddings = (long) vocabulary * d + (long) positions * d + (long) segments * d;
        long embeddingNorm = postNorm ? 2 * d : 0; // BERT normalises the summed embeddings
        long attention = 3 * (d * d + d) + (d * d + d);
        long ffn = (d * feedForward + feedForward) + ((long) feedForward * d + d);
        long norms = 2 * (2 * d);
        long perLayer = attention + ffn + norms;
        long head = pooler ? d * d + d : 2 * d; // BERT pooler, or GPT-2's final layer norm
        long nonEmbedding = layers * perLayer + head;
        long parameters = embeddings + embeddingNorm + nonEmbedding;
        double flopsPerToken = 2.0 * nonEmbedding + 2.0 * layers * sequenceLength * d;
        return new Architecture(name, parameters, flopsPerToken * sequenceLength, sequenceLength);
    }
}
