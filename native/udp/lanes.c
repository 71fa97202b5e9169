/*
 * Lane adds for the switch's aggregation engine (io.netreduce.wire.udp.NativeUdp.addFloats
 * and addInts): dst[i] += src[i] over direct memory in the machine's byte order, so that a
 * rank's packet is added into the running sum where the data plane received it, with no
 * copy into a rank buffer first. Each float lane is one IEEE single-precision add of the
 * same two operands as the JVM's (no FMA, no reassociation: this file must never be built
 * with -ffast-math), so the sums are bit for bit those of the Java path; int lanes wrap.
 * The vector width is picked when the library loads (AVX-512, AVX2 or the SSE2 baseline).
 */
#include <jni.h>
#include <stdint.h>

__attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
static void add_floats(float *restrict dst, const float *restrict src, int count) {
    for (int i = 0; i < count; i++) dst[i] += src[i];
}

__attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
static void add_ints(uint32_t *restrict dst, const uint32_t *restrict src, int count) {
    for (int i = 0; i < count; i++) dst[i] += src[i];
}

/* A float that may lie at any address: no alignment assumed, so no aligned vector access. */
typedef float any_float __attribute__((aligned(1)));

/*
 * dst[i] = a[i] + b[i] (io.netreduce.wire.udp.NativeUdp.addFloats3), for the hosts' reduction
 * kernel (io.netreduce.collectives.algorithm.kernel.NativeReductionKernel): about twice the
 * speed of the JVM's Vector API loop over direct buffers on data in cache. dst may be a or b.
 */
__attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
static void add_floats3(any_float *dst, const any_float *a, const any_float *b, int count) {
    for (int i = 0; i < count; i++) dst[i] = a[i] + b[i];
}

JNIEXPORT void JNICALL Java_io_netreduce_wire_udp_NativeUdp_addFloats3(JNIEnv *env, jclass c, jlong dst, jlong a,
                                                                       jlong b, jint count) {
    add_floats3((any_float *) (intptr_t) dst, (const any_float *) (intptr_t) a, (const any_float *) (intptr_t) b,
                count);
}

JNIEXPORT void JNICALL Java_io_netreduce_wire_udp_NativeUdp_addFloats(JNIEnv *env, jclass c, jlong dst, jlong src,
                                                                      jint count) {
    add_floats((float *) (intptr_t) dst, (const float *) (intptr_t) src, count);
}

JNIEXPORT void JNICALL Java_io_netreduce_wire_udp_NativeUdp_addInts(JNIEnv *env, jclass c, jlong dst, jlong src,
                                                                    jint count) {
    add_ints((uint32_t *) (intptr_t) dst, (const uint32_t *) (intptr_t) src, count);
}
