package io.netreduce.collectives.algorithm.netreduce;

/**
 * Per-message callbacks around the sliding window, used to pipeline staging of memory that
 * cannot be registered (a heap array): copy a slice in just before it is sent and copy its
 * result out as soon as it arrives. Element ranges are relative to the tensor's start.
 */
public interface MessageHooks {
    MessageHooks NONE = new MessageHooks() {
        @Override
        public void beforeSend(int elementOffset, int elementCount) {
        }

        @Override
        public void afterResult(int elementOffset, int elementCount) {
        }
    };

    void beforeSend(int elementOffset, int elementCount);

    void afterResult(int elementOffset, int elementCount);
}
