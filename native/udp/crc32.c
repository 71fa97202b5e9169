/*
 * CRC-32 (IEEE 802.3, the polynomial of RoCEv2's ICRC and of java.util.zip.CRC32) over
 * native memory, for ICRCs of datagrams in direct buffers. Where the CPU has PCLMULQDQ the
 * bulk is folded 64 bytes at a time, a piece of 16 to 63 bytes 16 at a time (V. Gopal, E.
 * Ozturk et al., "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ Instruction",
 * Intel, 2009; the constants are the paper's for the bit-reflected polynomial 0x104C11DB7),
 * and the last 0 to 15 bytes eight at a time through tables. Where the CPU has VPCLMULQDQ
 * with AVX-512, the same folds run on four 512-bit registers, 256 bytes at a time (16 lanes
 * of 128 bits, as the JDK's own intrinsic does on such CPUs: the 128-bit fold is
 * latency-bound at about a third of its speed there).
 * The point is the short and mid-sized pieces of a datagram (a 48-byte ICRC template, a 1 KiB
 * payload): java.util.zip.CRC32 pays about 30 ns per call before its first byte, and a
 * datagram's ICRC takes two to three calls.
 */
#include <jni.h>
#include <stddef.h>
#include <stdint.h>

static uint32_t table[8][256];

__attribute__((constructor)) static void crc32_tables(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) {
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        }
        table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        for (int t = 1; t < 8; t++) {
            table[t][n] = (table[t - 1][n] >> 8) ^ table[0][table[t - 1][n] & 0xFF];
        }
    }
}

/* state: the CRC register (the value inverted) */
static uint32_t crc32_tables8(uint32_t state, const unsigned char *p, size_t n) {
    while (n >= 8) {
        uint32_t lo = state ^ (p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        uint32_t hi = p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
        state = table[7][lo & 0xFF] ^ table[6][lo >> 8 & 0xFF] ^ table[5][lo >> 16 & 0xFF] ^ table[4][lo >> 24]
              ^ table[3][hi & 0xFF] ^ table[2][hi >> 8 & 0xFF] ^ table[1][hi >> 16 & 0xFF] ^ table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n-- > 0) {
        state = table[0][(state ^ *p++) & 0xFF] ^ (state >> 8);
    }
    return state;
}

#if defined(__x86_64__)
#include <immintrin.h>

/*
 * Fold constants: for a fold over a distance of D bits, the low quadword is
 * reflect(x^(D+32) mod P) << 1 and the high one reflect(x^(D-32) mod P) << 1.
 */
#define K_128_LO 0x01751997d0 /* D = 128: one lane into the next */
#define K_128_HI 0x00ccaa009e
#define K_512_LO 0x0154442bd4 /* D = 512: four 128-bit lanes, 64 bytes */
#define K_512_HI 0x01c6e41596
#define K_2048_LO 0x011542778a /* D = 2048: four 512-bit registers, 256 bytes */
#define K_2048_HI 0x01322d1430

/* One 128-bit lane x1 holding 16 bytes folded so far; len bytes (a multiple of 16) follow at buf. */
__attribute__((target("pclmul,sse4.1")))
static uint32_t crc32_fold_lane(__m128i x1, const unsigned char *buf, size_t len) {
    const __m128i k3k4 = _mm_set_epi64x(K_128_HI, K_128_LO);
    const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124);
    const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
    __m128i x0, x2, x5;
    while (len >= 16) {
        x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
        x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11),
                                         _mm_loadu_si128((const __m128i *)buf)), x5);
        buf += 16;
        len -= 16;
    }
    /* 128 bits to 64, then Barrett reduction to 32 */
    const __m128i mask = _mm_setr_epi32(~0, 0, ~0, 0);
    x2 = _mm_clmulepi64_si128(x1, k3k4, 0x10);
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2);
    x2 = _mm_srli_si128(x1, 4);
    x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, mask), k5k0, 0x00), x2);
    x2 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask), poly, 0x10);
    x2 = _mm_clmulepi64_si128(_mm_and_si128(x2, mask), poly, 0x00);
    x0 = _mm_xor_si128(x1, x2);
    return (uint32_t)_mm_extract_epi32(x0, 1);
}

/* Four 128-bit lanes x1..x4 holding 64 consecutive bytes folded so far; len bytes follow at buf. */
__attribute__((target("pclmul,sse4.1")))
static uint32_t crc32_fold_lanes(__m128i x1, __m128i x2, __m128i x3, __m128i x4, const unsigned char *buf,
                                 size_t len) {
    const __m128i k1k2 = _mm_set_epi64x(K_512_HI, K_512_LO);
    const __m128i k3k4 = _mm_set_epi64x(K_128_HI, K_128_LO);
    __m128i x5, x6, x7, x8;
    while (len >= 64) {
        x5 = _mm_clmulepi64_si128(x1, k1k2, 0x00);
        x6 = _mm_clmulepi64_si128(x2, k1k2, 0x00);
        x7 = _mm_clmulepi64_si128(x3, k1k2, 0x00);
        x8 = _mm_clmulepi64_si128(x4, k1k2, 0x00);
        x1 = _mm_clmulepi64_si128(x1, k1k2, 0x11);
        x2 = _mm_clmulepi64_si128(x2, k1k2, 0x11);
        x3 = _mm_clmulepi64_si128(x3, k1k2, 0x11);
        x4 = _mm_clmulepi64_si128(x4, k1k2, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), _mm_loadu_si128((const __m128i *)(buf + 0x00)));
        x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), _mm_loadu_si128((const __m128i *)(buf + 0x10)));
        x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), _mm_loadu_si128((const __m128i *)(buf + 0x20)));
        x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), _mm_loadu_si128((const __m128i *)(buf + 0x30)));
        buf += 64;
        len -= 64;
    }
    /* fold the four lanes into one */
    x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), x2), x5);
    x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), x3), x5);
    x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), x4), x5);
    return crc32_fold_lane(x1, buf, len);
}

/* len >= 16 and a multiple of 16; state as above. Below 64 bytes one lane folds: a 48-byte
 * ICRC template took the tables about twice as long. */
__attribute__((target("pclmul,sse4.1")))
static uint32_t crc32_fold(const unsigned char *buf, size_t len, uint32_t state) {
    __m128i x1 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)buf), _mm_cvtsi32_si128((int)state));
    if (len < 64) {
        return crc32_fold_lane(x1, buf + 16, len - 16);
    }
    return crc32_fold_lanes(x1, _mm_loadu_si128((const __m128i *)(buf + 0x10)),
                            _mm_loadu_si128((const __m128i *)(buf + 0x20)),
                            _mm_loadu_si128((const __m128i *)(buf + 0x30)), buf + 64, len - 64);
}

#define WIDE_TARGET "avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1"

/* Each 128-bit lane of z moved D bits on (the constants in k) and added to the data d. */
__attribute__((target(WIDE_TARGET)))
static inline __m512i fold512(__m512i z, __m512i k, __m512i d) {
    return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z, k, 0x00), _mm512_clmulepi64_epi128(z, k, 0x11),
                                     d, 0x96);
}

/* len >= 256 and a multiple of 16; state as above */
__attribute__((target(WIDE_TARGET)))
static uint32_t crc32_fold_wide(const unsigned char *buf, size_t len, uint32_t state) {
    __m512i z0 = _mm512_xor_si512(_mm512_loadu_si512(buf), _mm512_castsi128_si512(_mm_cvtsi32_si128((int)state)));
    __m512i z1 = _mm512_loadu_si512(buf + 64);
    __m512i z2 = _mm512_loadu_si512(buf + 128);
    __m512i z3 = _mm512_loadu_si512(buf + 192);
    buf += 256;
    len -= 256;
    const __m512i k2048 = _mm512_broadcast_i32x4(_mm_set_epi64x(K_2048_HI, K_2048_LO));
    while (len >= 256) {
        z0 = fold512(z0, k2048, _mm512_loadu_si512(buf));
        z1 = fold512(z1, k2048, _mm512_loadu_si512(buf + 64));
        z2 = fold512(z2, k2048, _mm512_loadu_si512(buf + 128));
        z3 = fold512(z3, k2048, _mm512_loadu_si512(buf + 192));
        buf += 256;
        len -= 256;
    }
    /* the four registers into one, then whole 64-byte blocks into it */
    const __m512i k512 = _mm512_broadcast_i32x4(_mm_set_epi64x(K_512_HI, K_512_LO));
    z1 = fold512(z0, k512, z1);
    z2 = fold512(z1, k512, z2);
    z3 = fold512(z2, k512, z3);
    while (len >= 64) {
        z3 = fold512(z3, k512, _mm512_loadu_si512(buf));
        buf += 64;
        len -= 64;
    }
    __m128i x1 = _mm512_extracti32x4_epi32(z3, 0);
    __m128i x2 = _mm512_extracti32x4_epi32(z3, 1);
    __m128i x3 = _mm512_extracti32x4_epi32(z3, 2);
    __m128i x4 = _mm512_extracti32x4_epi32(z3, 3);
    /* The rest is legacy-SSE code: on Intel CPUs SSE instructions run slower while the upper
     * halves of the vector registers are dirty (they wait on a merge). vzeroupper keeps the
     * low 128 bits, so the four lanes survive it. */
    _mm256_zeroupper();
    return crc32_fold_lanes(x1, x2, x3, x4, buf, len);
}

#endif

/* How this CPU folds: FOLDS_NONE (tables only), FOLDS_128 (PCLMULQDQ) or FOLDS_512 (VPCLMULQDQ). */
enum { FOLDS_NONE = 0, FOLDS_128 = 1, FOLDS_512 = 2 };

static int cpu_folds(void) {
    static int known = -1;
    if (known < 0) {
        int folds = FOLDS_NONE;
#if defined(__x86_64__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1")) {
            folds = FOLDS_128;
            if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")
                && __builtin_cpu_supports("vpclmulqdq")) {
                folds = FOLDS_512;
            }
        }
#endif
        known = folds;
    }
    return known;
}

/* java.util.zip.CRC32 semantics: crc is the value so far (0 to start), the result the value after;
 * folds: the widest fold to use, at most cpu_folds() */
static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n, int folds) {
    uint32_t state = ~crc;
#if defined(__x86_64__)
    if (n >= 16 && folds > FOLDS_NONE) {
        size_t bulk = n & ~(size_t)15;
        state = bulk >= 256 && folds >= FOLDS_512 ? crc32_fold_wide(p, bulk, state) : crc32_fold(p, bulk, state);
        p += bulk;
        n -= bulk;
    }
#else
    (void)folds;
#endif
    return ~crc32_tables8(state, p, n);
}

/* crc continued over an bytes at a, then bn bytes at b */
static jint crc32_pieces(int folds, jint crc, jlong a, jint an, jlong b, jint bn) {
    uint32_t v = crc32_update((uint32_t)crc, (const unsigned char *)(uintptr_t)a, (size_t)an, folds);
    return (jint)crc32_update(v, (const unsigned char *)(uintptr_t)b, (size_t)bn, folds);
}

JNIEXPORT jint JNICALL Java_io_netreduce_wire_udp_NativeUdp_crc32(JNIEnv *env, jclass c, jint crc, jlong a, jint an,
                                                                jlong b, jint bn) {
    (void)env;
    (void)c;
    return crc32_pieces(cpu_folds(), crc, a, an, b, bn);
}

JNIEXPORT jint JNICALL Java_io_netreduce_wire_udp_NativeUdp_crc32Narrowed(JNIEnv *env, jclass c, jint folds,
                                                                        jint crc, jlong a, jint an, jlong b,
                                                                        jint bn) {
    (void)env;
    (void)c;
    return crc32_pieces(folds < cpu_folds() ? folds : cpu_folds(), crc, a, an, b, bn);
}

JNIEXPORT jint JNICALL Java_io_netreduce_wire_udp_NativeUdp_crc32Folds(JNIEnv *env, jclass c) {
    (void)env;
    (void)c;
    return cpu_folds();
}
