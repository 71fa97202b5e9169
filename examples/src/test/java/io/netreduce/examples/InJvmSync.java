package io.netreduce.examples;

import java.nio.FloatBuffer;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Test helper: P threads of one JVM summing through shared arrays, in rank order.
 * It checks the training logic independently of any transport; the tests that
 * matter go through the real communicator.
 */
final class InJvmSync {

    private final int world;
    private final CyclicBarrier barrier;
    private final FloatBuffer[] contributions;
    private float[] sum = new float[0];

    InJvmSync(int world) {
        this.world = world;
        this.contributions = new FloatBuffer[world];
        this.barrier = new CyclicBarrier(world);
    }

    GradientSync member(int rank) {
        return new GradientSync() {
            @Override
            public int rank() {
                return rank;
            }

            @Override
            public int worldSize() {
                return world;
            }

            @Override
            public void sumInPlace(FloatBuffer buffer) {
                contributions[rank] = buffer;
                await();
                if (rank == 0) {
                    int n = buffer.remaining();
                    if (sum.length < n) {
                        sum = new float[n];
                    }
                    for (int i = 0; i < n; i++) {
                        float s = 0f;
                        for (int r = 0; r < world; r++) {
                            s += contributions[r].get(contributions[r].position() + i);
                        }
                        sum[i] = s;
                    }
                }
                await();
                for (int i = 0; i < buffer.remaining(); i++) {
                    buffer.put(buffer.position() + i, sum[i]);
                }
                await();
            }
        };
    }

    private void await() {
        try {
            barrier.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException | BrokenBarrierException | TimeoutException e) {
            throw new IllegalStateException("in-JVM sync: a worker did not arrive", e);
        }
    }
}
