/*
 * CRC-32 (IEEE 802.3, the polynomial of RoCEv2's ICRC and of java.util.zip.CRC32) over
 * native memory, for ICRCs of datagrams in direct buffers. Where the CPU has PCLMULQDQ the
 * bulk is folded 64 bytes at a time (V. Gopal, E. Ozturk et al., "Fast CRC Computation for
 * Generic Polynomials Using PCLMULQDQ Instruction", Intel, 2009; the constants are the
 * paper's for the bit-reflected polynomial 0x104C11DB7), the rest is done eight bytes at a
 * time through tables. The point is the short and mid-sized pieces of a datagram (a 40-byte
 * ICRC template, a 1 KiB payload): java.util.zip.CRC32 pays about 30 ns per call before its
 * first byte, and a datagram's ICRC takes two to three calls.
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

/* len >= 64 and a multiple of 16; state as above */
__attribute__((target("pclmul,sse4.1")))
static uint32_t crc32_fold(const unsigned char *buf, size_t len, uint32_t state) {
    const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
    const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
    const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124);
    const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
    __m128i x1 = _mm_loadu_si128((const __m128i *)(buf + 0x00));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(buf + 0x10));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(buf + 0x20));
    __m128i x4 = _mm_loadu_si128((const __m128i *)(buf + 0x30));
    __m128i x0, x5, x6, x7, x8;
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)state));
    buf += 64;
    len -= 64;
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

static int has_pclmul(void) {
    static int known = -1;
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
    }
    return known;
}
#endif

/* java.util.zip.CRC32 semantics: crc is the value so far (0 to start), the result the value after */
static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n) {
    uint32_t state = ~crc;
#if defined(__x86_64__)
    if (n >= 64 && has_pclmul()) {
        size_t bulk = n & ~(size_t)15;
        state = crc32_fold(p, bulk, state);
        p += bulk;
        n -= bulk;
    }
#endif
    return ~crc32_tables8(state, p, n);
}

JNIEXPORT jint JNICALL Java_io_netreduce_wire_udp_NativeUdp_crc32(JNIEnv *env, jclass c, jint crc, jlong a, jint an,
                                                                jlong b, jint bn) {
    (void)env;
    (void)c;
    uint32_t v = crc32_update((uint32_t)crc, (const unsigned char *)(uintptr_t)a, (size_t)an);
    return (jint)crc32_update(v, (const unsigned char *)(uintptr_t)b, (size_t)bn);
}

JNIEXPORT jint JNICALL Java_io_netreduce_wire_udp_NativeUdp_crc32Folds(JNIEnv *env, jclass c) {
    (void)env;
    (void)c;
#if defined(__x86_64__)
    return has_pclmul();
#else
    return 0;
#endif
}
