#pragma once
// Transcendental functions written with +, -, *, / and bit operations only, so the CPU engine
// (glibc), the CUDA kernels (libdevice) and the tuner plugin compute bit-identical results: the
// libraries' own log() may differ in the last bit, IEEE +, -, *, / and sqrt may not (with FMA
// contraction off, which the build enforces on host and device).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "ncclbot/core/hd.hpp"

namespace ncclbot {

namespace portable_detail {
NCCLBOT_HD inline uint64_t bits_of(double x) {
#if defined(__CUDA_ARCH__)
  return uint64_t(__double_as_longlong(x));
#else
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}
NCCLBOT_HD inline double double_of(uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double((long long)u);
#else
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}
}  // namespace portable_detail

// Natural logarithm, fdlibm's __ieee754_log (Sun Microsystems 1993, also FreeBSD msun e_log.c):
// x = 2^k (1 + f) with sqrt(2)/2 < 1 + f < sqrt(2), s = f / (2 + f), log(1 + f) = f - s (f - R(s^2))
// with a degree-14 minimax R; error < 1 ulp. log(0) = -inf, log(x < 0) = NaN.
NCCLBOT_HD inline double portable_log(double x) {
  using namespace portable_detail;
  constexpr double ln2_hi = 6.93147180369123816490e-01;  // 3fe62e42 fee00000
  constexpr double ln2_lo = 1.90821492927058770002e-10;  // 3dea39ef 35793c76
  constexpr double two54 = 1.80143985094819840000e+16;   // 43500000 00000000
  constexpr double Lg1 = 6.666666666666735130e-01;       // 3FE55555 55555593
  constexpr double Lg2 = 3.999999999940941908e-01;       // 3FD99999 9997FA04
  constexpr double Lg3 = 2.857142874366239149e-01;       // 3FD24924 94229359
  constexpr double Lg4 = 2.222219843214978396e-01;       // 3FCC71C5 1D8E78AF
  constexpr double Lg5 = 1.818357216161805012e-01;       // 3FC74664 96CB03DE
  constexpr double Lg6 = 1.531383769920937332e-01;       // 3FC39A09 D078C69F
  constexpr double Lg7 = 1.479819860511658591e-01;       // 3FC2F112 DF3E5244

  uint64_t u = bits_of(x);
  int32_t hx = int32_t(u >> 32);
  const uint32_t lx = uint32_t(u);
  int32_t k = 0;
  if (hx < 0x00100000) {                                           // x < 2^-1022
    if (((hx & 0x7fffffff) | int32_t(lx)) == 0) return -HUGE_VAL;  // log(+-0) = -inf
    if (hx < 0) return (x - x) / (x - x);                          // log(-#) = NaN
    k -= 54;
    x *= two54;  // scale a subnormal up
    u = bits_of(x);
    hx = int32_t(u >> 32);
  }
  if (hx >= 0x7ff00000) return x + x;  // inf or NaN
  k += (hx >> 20) - 1023;
  hx &= 0x000fffff;
  const int32_t i0 = (hx + 0x95f64) & 0x100000;
  x = double_of((uint64_t(uint32_t(hx | (i0 ^ 0x3ff00000))) << 32) | (bits_of(x) & 0xffffffffu));  // x or x/2
  k += (i0 >> 20);
  const double f = x - 1.0;
  if ((0x000fffff & (2 + hx)) < 3) {  // -2^-20 <= f < 2^-20
    if (f == 0.0) {
      if (k == 0) return 0.0;
      const double dk = double(k);
      return dk * ln2_hi + dk * ln2_lo;
    }
    const double R = f * f * (0.5 - 0.33333333333333333 * f);
    if (k == 0) return f - R;
    const double dk = double(k);
    return dk * ln2_hi - ((R - dk * ln2_lo) - f);
  }
  const double s = f / (2.0 + f);
  const double dk = double(k);
  const double z = s * s;
  int32_t i = hx - 0x6147a;
  const double w = z * z;
  const int32_t j = 0x6b851 - hx;
  const double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
  const double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
  i |= j;
  const double R = t2 + t1;
  if (i > 0) {
    const double hfsq = 0.5 * f * f;
    if (k == 0) return f - (hfsq - s * (hfsq + R));
    return dk * ln2_hi - ((hfsq - (s * (hfsq + R) + dk * ln2_lo)) - f);
  }
  if (k == 0) return f - s * (f - R);
  return dk * ln2_hi - ((s * (f - R) - dk * ln2_lo) - f);
}

// e^x, fdlibm's __ieee754_exp (Sun Microsystems 1993, also FreeBSD msun e_exp.c): x = k ln2 + r with
// |r| <= ln2/2 (ln2 split in two so k ln2 is exact), e^r from a degree-5 minimax R(r^2) as
// 1 + r + r c / (2 - c), then 2^k put into the exponent bits; error < 1 ulp. Overflow gives +inf,
// underflow 0.
NCCLBOT_HD inline double portable_exp(double x) {
  using namespace portable_detail;
  constexpr double o_threshold = 7.09782712893383973096e+02;   // 40862E42 FEFA39EF
  constexpr double u_threshold = -7.45133219101941108420e+02;  // c0874910 D52D3051
  constexpr double ln2_hi = 6.93147180369123816490e-01;        // 3fe62e42 fee00000
  constexpr double ln2_lo = 1.90821492927058770002e-10;        // 3dea39ef 35793c76
  constexpr double inv_ln2 = 1.44269504088896338700e+00;       // 3ff71547 652b82fe
  constexpr double twom1000 = 9.33263618503218878990e-302;     // 2^-1000
  constexpr double P1 = 1.66666666666666019037e-01;            // 3FC55555 5555553E
  constexpr double P2 = -2.77777777770155933842e-03;           // BF66C16C 16BEBD93
  constexpr double P3 = 6.61375632143793436117e-05;            // 3F11566A AF25DE2C
  constexpr double P4 = -1.65339022054652515390e-06;           // BEBBBD41 C5D26BF1
  constexpr double P5 = 4.13813679705723846039e-08;            // 3E663769 72BEA4D0

  const uint64_t u = bits_of(x);
  const uint32_t hx = uint32_t(u >> 32) & 0x7fffffffu;
  const bool negative = (u >> 63) != 0;
  if (hx >= 0x40862E42u) {  // |x| >= 709.78...
    if (hx >= 0x7ff00000u) {
      if (((hx & 0xfffffu) | uint32_t(u)) != 0) return x + x;  // NaN
      return negative ? 0.0 : x;                               // exp(+-inf) = inf, 0
    }
    if (x > o_threshold) return HUGE_VAL;
    if (x < u_threshold) return 0.0;
  }
  double hi = 0.0, lo = 0.0;
  int32_t k = 0;
  if (hx > 0x3fd62e42u) {    // |x| > ln2 / 2
    if (hx < 0x3FF0A2B2u) {  // and |x| < 3 ln2 / 2
      hi = negative ? x + ln2_hi : x - ln2_hi;
      lo = negative ? -ln2_lo : ln2_lo;
      k = negative ? -1 : 1;
    } else {
      k = int32_t(inv_ln2 * x + (negative ? -0.5 : 0.5));
      const double t = double(k);
      hi = x - t * ln2_hi;  // exact: t * ln2_hi has few bits
      lo = t * ln2_lo;
    }
    x = hi - lo;
  } else if (hx < 0x3e300000u) {  // |x| < 2^-28
    return 1.0 + x;
  }
  const double t = x * x;
  const double c = x - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
  if (k == 0) return 1.0 - ((x * c) / (c - 2.0) - x);
  const double y = 1.0 - ((lo - (x * c) / (2.0 - c)) - hi);
  if (k >= -1021) return double_of(bits_of(y) + (uint64_t(int64_t(k)) << 52));
  return double_of(bits_of(y) + (uint64_t(int64_t(k + 1000)) << 52)) * twom1000;
}

// x^y for x > 0 as e^(y log x), from the two portable functions above: within a few ulp of libm's
// pow for the moderate exponents the noise model draws (not a general pow).
NCCLBOT_HD inline double portable_pow_positive(double x, double y) {
  return portable_exp(y * portable_log(x));
}

namespace portable_detail {
// AS 241 central region |p - 0.5| <= 0.425: a rational function of r = 0.180625 - q^2.
NCCLBOT_HD inline double normal_quantile_central(double q) {
  const double r = 0.180625 - q * q;
  return q *
         (((((((2.5090809287301226727e+3 * r + 3.3430575583588128105e+4) * r + 6.7265770927008700853e+4) * r +
              4.5921953931549871457e+4) *
                 r +
             1.3731693765509461125e+4) *
                r +
            1.9715909503065514427e+3) *
               r +
           1.3314166789178437745e+2) *
              r +
          3.3871328727963666080e0) /
         (((((((5.2264952788528545610e+3 * r + 2.8729085735721942674e+4) * r + 3.9307895800092710610e+4) * r +
              2.1213794301586595867e+4) *
                 r +
             5.3941960214247511077e+3) *
                r +
            6.8718700749205790830e+2) *
               r +
           4.2313330701600911252e+1) *
              r +
          1.0);
}

// AS 241 tail with r = sqrt(-log(min(p, 1 - p))) <= 5: the rational function of r - 1.6.
NCCLBOT_HD inline double normal_quantile_near_tail(double r) {
  r -= 1.6;
  return (((((((7.74545014278341407640e-4 * r + 2.27238449892691845833e-2) * r + 2.41780725177450611770e-1) *
                  r +
              1.27045825245236838258e0) *
                 r +
             3.64784832476320460504e0) *
                r +
            5.76949722146069140550e0) *
               r +
           4.63033784615654529590e0) *
              r +
          1.42343711074968357734e0) /
         (((((((1.05075007164441684324e-9 * r + 5.47593808499534494600e-4) * r + 1.51986665636164571966e-2) *
                  r +
              1.48103976427480074590e-1) *
                 r +
             6.89767334985100004550e-1) *
                r +
            1.67638483018380384940e0) *
               r +
           2.05319162663775882187e0) *
              r +
          1.0);
}

// AS 241 far tail, r = sqrt(-log(min(p, 1 - p))) > 5: the rational function of r - 5.
NCCLBOT_HD inline double normal_quantile_far_tail(double r) {
  r -= 5.0;
  return (((((((2.01033439929228813265e-7 * r + 2.71155556874348757815e-5) * r + 1.24266094738807843860e-3) *
                  r +
              2.65321895265761230930e-2) *
                 r +
             2.96560571828504891230e-1) *
                r +
            1.78482653991729133580e0) *
               r +
           5.46378491116411436990e0) *
              r +
          6.65790464350110377720e0) /
         (((((((2.04426310338993978564e-15 * r + 1.42151175831644588870e-7) * r + 1.84631831751005468180e-5) *
                  r +
              7.86869131145613259100e-4) *
                 r +
             1.48753612908506148525e-2) *
                r +
            1.36929880922735805310e-1) *
               r +
           5.99832206555887937690e-1) *
              r +
          1.0);
}
}  // namespace portable_detail

// Standard normal quantile for p in (0, 1): Wichura's algorithm AS 241 (PPND16, Applied
// Statistics 37, 1988), relative accuracy about 1e-16; uses portable_log and IEEE sqrt only.
NCCLBOT_HD inline double normal_quantile(double p) {
  using namespace portable_detail;
  const double q = p - 0.5;
  if ((q < 0 ? -q : q) <= 0.425) return normal_quantile_central(q);
  double r = q < 0 ? p : 1.0 - p;
  r = sqrt(-portable_log(r));
  double value;
  if (r <= 5.0) {
    value = normal_quantile_near_tail(r);
  } else {
    value = normal_quantile_far_tail(r);
  }
  return q < 0 ? -value : value;
}

}  // namespace ncclbot
