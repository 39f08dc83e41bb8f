"""Reference values for tests/analysis/test_stats.cpp (PyPI scipy, numpy, mpmath). Writes stats.json and
the KS sample pairs (raw little-endian float64, ks_<case>_a.f64 / _b.f64) into the folder argv[1].

- ks: scipy.stats.ks_2samp(a, b, method='asymp') on sample pairs: small, unequal sizes, tied
  values, large pairs with p from 1e-40 down to below 1e-300, and non-overlapping samples.
  Where scipy's p is 0 or below 1e-300 the reference is log10 p, computed in 60-digit mpmath
  with the formula scipy itself uses there (p = 2 * smirnov(n_eff, D), the Birnbaum-Tingey sum),
  or for non-overlapping samples (D = 1, scipy says 0) the exact two-sample 2 / C(n1 + n2, n1).
- kstwo: scipy.stats.kstwo.sf(x, n) on a grid covering every region of scipy's _kolmogn, plus
  log10 references in the far tail (mpmath; for n in the millions the same sum vectorised with
  scipy.special.gammaln / logsumexp, checked against mpmath here on a smaller n).
- describe: numpy.histogram(range=(0, 1)), numpy.quantile (method='linear') and numpy.mean.
"""
import json
import math
import os
import sys

import mpmath
import numpy as np
from scipy import special, stats

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(20240917)


def log10_smirnov_mp(n, x):
    """log10 P(D+_n >= x) = log10(x * sum_j C(n,j) (x+j/n)^(j-1) (1-x-j/n)^(n-j)), 60 digits."""
    with mpmath.workdps(60):
        xm = mpmath.mpf(float(x))  # the double's exact value
        total = mpmath.mpf(0)
        biggest = mpmath.mpf(0)
        for j in range(0, n + 1):
            base = 1 - xm - mpmath.mpf(j) / n
            if base <= 0:
                break
            term = mpmath.binomial(n, j) * (xm + mpmath.mpf(j) / n) ** (j - 1) * base ** (n - j)
            total += term
            if term > biggest:
                biggest = term
            elif term < total * mpmath.mpf(10) ** -40:
                break  # past the mode: the terms only fall from here (for these x)
        return float(mpmath.log10(xm * total))


def log10_smirnov_vec(n, x):
    """The same sum in float64 logs, vectorised (for n in the millions)."""
    j = np.arange(0, n + 1, dtype=np.float64)
    base = (n - j) / n - x
    keep = base > 0
    j, base = j[keep], base[keep]
    logs = (special.gammaln(n + 1.0) - special.gammaln(j + 1) - special.gammaln(n - j + 1)
            + (n - j) * np.log(base) + (j - 1) * np.log(x + j / n))
    return float((math.log(x) + special.logsumexp(logs)) / math.log(10))


# The two evaluations of the far tail agree (and agree with scipy where scipy is finite).
for n, x in [(2000, 0.11), (5000, 0.05)]:
    a, b = log10_smirnov_mp(n, x), log10_smirnov_vec(n, x)
    s = math.log10(special.smirnov(n, x))
    assert abs(a - b) < 1e-8 * abs(a) and abs(a - s) < 1e-9 * abs(a), (n, x, a, b, s)


def separated_log10(n1, n2):
    with mpmath.workdps(40):
        return float(mpmath.log10(2 / mpmath.binomial(n1 + n2, n1)))


# ---------------------------------------------------------------- ks_2samp pairs
def beta(a, b, n):
    return rng.beta(a, b, size=n)


big_a = rng.normal(0.0, 1.0, size=30000)
big_b = rng.normal(0.0, 1.0, size=50000)
cases = {
    "small": (beta(5, 2, 8), beta(2, 2, 11)),
    "small_equal": (rng.normal(0, 1, 25), rng.normal(0.8, 1, 25)),  # n_eff = 12.5 -> 12 (half to even)
    "unequal": (beta(4, 2, 300), beta(3.4, 2, 1700)),
    "ties": (np.round(beta(4, 2, 500), 2), np.round(beta(3.5, 2, 800), 2)),
    "ties_heavy": (rng.integers(0, 5, 400).astype(np.float64), rng.integers(1, 6, 600).astype(np.float64)),
    "identical": (np.round(beta(2, 2, 50), 1), None),
    "body_pelz_good": (beta(5, 2, 4000), beta(5, 2, 4000) * 0.995),
    "body_durbin": (np.arange(300) / 300.0, (np.arange(300) + 11.5) / 300.0),  # n_eff 150, D 0.04
    "large_p1e-40": (big_a, big_b + 0.125),
    "large_p1e-150": (big_a, big_b + 0.24),
    "large_p1e-250": (big_a, big_b + 0.31),
    "large_underflow": (big_a, big_b + 0.6),
    "separated": (rng.uniform(0.0, 0.4, 300), rng.uniform(0.6, 1.0, 500)),
}
ks_out = []
for name, (a, b) in cases.items():
    if b is None:
        b = a.copy()
    a = np.asarray(a, dtype="<f8")
    b = np.asarray(b, dtype="<f8")
    a.tofile(os.path.join(out, f"ks_{name}_a.f64"))
    b.tofile(os.path.join(out, f"ks_{name}_b.f64"))
    res = stats.ks_2samp(a, b, method="asymp")
    n1, n2 = len(a), len(b)
    m, n = sorted([float(n1), float(n2)], reverse=True)
    n_eff = int(np.round(m * n / (m + n)))
    d, p = float(res.statistic), float(res.pvalue)
    if d >= 1.0:
        log10_ref, ref = separated_log10(n1, n2), "exact two-sample P(D=1) (mpmath)"
    elif p >= 1e-300:
        log10_ref, ref = math.log10(p), "scipy"
    else:
        log10_ref, ref = math.log10(2) + log10_smirnov_mp(n_eff, d), "2*smirnov (mpmath)"
    if 0 < p < 1e-30 and p >= 1e-300:  # the reference formula agrees with scipy where both exist
        assert abs(math.log10(2) + log10_smirnov_mp(n_eff, d) - log10_ref) < 1e-9 * abs(log10_ref), name
    ks_out.append({"name": name, "n1": n1, "n2": n2, "n_eff": n_eff, "statistic": d, "pvalue": p,
                   "log10_pvalue": log10_ref, "log10_reference": ref})
    print(f"ks {name:16s} n1={n1:6d} n2={n2:6d} n_eff={n_eff:6d} D={d:.6f} p={p:.6g} log10={log10_ref:.6f}")

# ---------------------------------------------------------------- kstwo grid
grid = []


def add(n, x, far_tail_ref=None):
    sf = float(stats.kstwo.sf(x, n))
    item = {"n": int(n), "x": float(x), "sf": sf}
    if far_tail_ref is not None:
        item["log10_sf"] = far_tail_ref
    grid.append(item)


for n, xs in [(1, [0.3, 0.6, 0.9]), (2, [0.2, 0.3, 0.55, 0.8]), (5, [0.15, 0.3, 0.45, 0.6, 0.85]),
              (10, [0.07, 0.12, 0.2, 0.3, 0.45, 0.55, 0.7, 0.92])]:
    for x in xs:
        add(n, x)
for n in [50, 140]:
    for nx2 in [0.3, 0.75, 1.0, 2.0, 3.9, 4.1, 10.0, 50.0]:
        add(n, math.sqrt(nx2 / n))
    add(n, 0.6)
for n in [141, 1000, 10000, 100000, 100001, 1000000, 1000001, 3000000]:
    for nx2 in [0.05, 0.3, 0.8, 1.5, 2.19, 2.21, 10.0, 50.0, 200.0, 350.0]:
        add(n, math.sqrt(nx2 / n))
for n, nx2 in [(1000, 0.02), (100000, 0.03)]:  # the Durbin matrix for n > 140 (n x^1.5 <= 1.4)
    add(n, math.sqrt(nx2 / n))
# Far tail: scipy returns 0 (or a subnormal); reference log10 sf = log10(2 * smirnov).
for n, x in [(50, 0.9), (50, 0.45), (2000, math.sqrt(400 / 2000)), (1000, 0.7), (1000, 0.45),
             (18750, 0.2363)]:
    add(n, x, math.log10(2) + log10_smirnov_mp(n, x))
for n, x in [(3000000, math.sqrt(500 / 3e6)), (3000000, 0.05)]:
    add(n, x, math.log10(2) + log10_smirnov_vec(n, x))
# Near x = 1 - 1/n: 2 (1 - x)^n exactly.
add(50, 0.99, math.log10(2) + 50 * math.log10(1 - 0.99))

# ---------------------------------------------------------------- descriptive statistics
conf = np.concatenate([rng.beta(8, 1, 3000), rng.uniform(0, 1, 700),
                       np.array([0.0, 1.0, 0.05, 0.5, 0.95, 0.1, 0.35, 0.7, 0.15])])
conf = conf.astype(np.float32).astype(np.float64)  # confidences are fp32 probabilities
# Values on and next to the bin edges (float64 decimals such as 0.15 lie below the edge 3 * 0.05,
# so numpy's edge comparison, not v * bins, decides their bin).
on_edges = [i * 0.05 for i in range(21)] + [0.15, 0.35, 0.45, 0.55, 0.7, 0.85, 0.95, 0.3, 0.6]
on_edges += [float(np.nextafter(v, 2.0)) for v in on_edges] + [float(np.nextafter(v, -1.0)) for v in on_edges[1:]]
with_outside = np.concatenate([conf, np.array(on_edges), np.array([-0.25, 1.5])])
levels = [0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 0.999, 1.0]
describe = {
    "values": with_outside.tolist(),
    "bins": 20,
    "hist_counts": np.histogram(with_outside, bins=20, range=(0, 1))[0].tolist(),
    "hist_density": np.histogram(with_outside, bins=20, range=(0, 1), density=True)[0].tolist(),
    "hist_edges": np.histogram(with_outside, bins=20, range=(0, 1))[1].tolist(),
    "hist_outside": int(np.sum((with_outside < 0) | (with_outside > 1))),
    "hist7_counts": np.histogram(with_outside, bins=7, range=(0, 1))[0].tolist(),
    "levels": levels,
    "quantiles": np.quantile(conf, levels, method="linear").tolist(),
    "quantile_values": conf.tolist(),
    "mean": float(np.mean(conf)),
    "small_quantiles": np.quantile(np.array([0.25, 0.5, 1.0, 0.75]), levels).tolist(),
}

with open(os.path.join(out, "stats.json"), "w") as f:
    json.dump({"ks": ks_out, "kstwo": grid, "describe": describe}, f, allow_nan=False)
print(f"wrote {len(ks_out)} ks cases, {len(grid)} kstwo points to {out}")
