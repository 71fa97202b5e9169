package io.netreduce.collectives.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.collectives.Collectives;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import org.junit.jupiter.api.Test;

class DirectBuffersTest {
    private static final int[] LENGTHS = {0, 1, 4, 63, 64, 65, 100, 4096, 262_144, (1 << 20) + 12};

    @Test
    void allocatedBuffersStartACacheLineAndHaveExactlyTheLengthAsked() {
        for (int bytes : LENGTHS) {
            ByteBuffer b = DirectBuffers.allocate(bytes);
            assertTrue(b.isDirect());
            assertEquals(bytes, b.capacity(), "capacity of " + bytes);
            assertEquals(bytes, b.remaining(), "remaining of " + bytes);
            if (bytes > 0) {
                assertEquals(0, b.alignmentOffset(0, DirectBuffers.ALIGNMENT), "alignment of " + bytes);
            }
        }
        assertThrows(IllegalArgumentException.class, () -> DirectBuffers.allocate(-1));
    }

    @Test
    void anAllocatedTensorIsFoundAsRegistrableMemoryWithItsOffset() {
        for (int bytes : LENGTHS) {
            int elements = bytes / Float.BYTES;
            FloatBuffer t = Collectives.allocateTensor(elements);
            assertEquals(elements, t.capacity());
            assertEquals(Collectives.TENSOR_ORDER, t.order());
            DirectBuffers.Root root = DirectBuffers.root(t);
            assertNotNull(root, "root of " + elements + " elements");
            // The view starts where the aligned slice does inside the memory malloc returned.
            assertTrue(root.byteOffset() >= 0 && root.byteOffset() < DirectBuffers.ALIGNMENT, "offset " + root.byteOffset());
            assertTrue(root.byteOffset() + 4L * elements <= root.buffer().capacity());
            if (elements > 0) {
                assertEquals(0, root.buffer().alignmentOffset((int) root.byteOffset(), DirectBuffers.ALIGNMENT));
                // Writes through the tensor land where the root says they are.
                t.put(elements - 1, 1.5f);
                assertEquals(1.5f, root.buffer().order(Collectives.TENSOR_ORDER)
                        .getFloat((int) root.byteOffset() + 4 * (elements - 1)));
            }
        }
    }
}
