/* The loops of _loops.pyx, in C: each is compiled for the widest vector
 * unit the machine has (AVX-512, AVX2, or the baseline), picked once when
 * the module loads (GCC's target_clones, on x86-64 Linux with glibc; one
 * baseline build elsewhere). In Cython, a comparison's result cast to a
 * float compiled to a branch, and the loop stayed scalar.
 *
 * Each computes exactly what its NumPy form does, element for element:
 * relu is np.maximum(x, 0) (a NaN stays NaN, -0.0 gives +0.0); mask_mul
 * is g * (y != 0) with the mask as 1.0 or 0.0 (so g * 0.0 where y is 0:
 * -0.0 for a negative g, NaN for an infinite one). Comparisons are
 * combined with `|`, not `||`, so that no branch stops vectorisation. */
#ifndef RG_COMPILE_LOOPS_H
#define RG_COMPILE_LOOPS_H

#include <stddef.h>
#include <stdlib.h>     /* (defines __GLIBC__ where the C library is glibc) */

#if defined(_MSC_VER) && !defined(restrict)
#define restrict __restrict
#endif

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && defined(__GLIBC__)
#define RG_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define RG_CLONES
#endif

#define RG_RELU(name, T)                                                         \
    RG_CLONES static void name(const T* restrict x, T* r, ptrdiff_t n) {         \
        for (ptrdiff_t i = 0; i < n; i++) {                                      \
            T v = x[i];                                                          \
            r[i] = ((v > 0) | (v != v)) ? v : (T)0;                              \
        }                                                                        \
    }

#define RG_MASK_MUL(name, T)                                                     \
    RG_CLONES static void name(const T* g, const T* y, T* r, ptrdiff_t n) {      \
        for (ptrdiff_t i = 0; i < n; i++) {                                      \
            T v = y[i];                                                          \
            r[i] = g[i] * (T)((v > 0) | (v < 0) | (v != v));                     \
        }                                                                        \
    }

RG_RELU(rg_relu_f64, double)
RG_RELU(rg_relu_f32, float)
RG_MASK_MUL(rg_mask_mul_f64, double)
RG_MASK_MUL(rg_mask_mul_f32, float)

#endif
