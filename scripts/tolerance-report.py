"""The table of scripts/test-numerics.sh: reads the tolerance logs of its variants
(<out>/<variant>.tsv, lines `site TAB observed TAB bound [TAB required margin]` written by the
tests' checks, see tests/test_util.h) and prints, per variant, whether its ctest run passed and its smallest margin,
then per check site its bound, the largest difference observed over all variants and the margin
bound / observed (an observed 0 is an infinite margin; for a site whose bound depends on the
values, e.g. a relative one, the margin is the smallest over its checks and the bound shown is
the one of that check). Writes the same text to <out>/report.txt.

  tolerance-report.py --out DIR [--min-margin M] VARIANT=CTEST_EXIT=SECONDS...

Exit status 1 when a ctest run failed, a check failed (observed > bound, or NaN), or a site's
margin is below M (default 10; a check that declares its own required margin, a comparison with a
reference implementation's own error, is held to that one and marked so); 0 otherwise."""
import argparse
import math
import os
import sys


def margin(observed, bound):
    if math.isnan(observed) or math.isnan(bound):
        return math.nan
    if observed == 0:
        return math.inf
    return bound / observed


def fmt_margin(m):
    if math.isnan(m):
        return "nan"
    if math.isinf(m):
        return "inf"
    return f"{m:.3g}"


def worse(a, b):
    """True when margin a is worse than b (NaN is the worst)."""
    if math.isnan(a):
        return not math.isnan(b)
    if math.isnan(b):
        return False
    return a < b


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--min-margin", type=float, default=10.0)
    ap.add_argument("variants", nargs="+", help="VARIANT=CTEST_EXIT=SECONDS")
    a = ap.parse_args()

    sites = {}  # site -> dict(n, max_obs, worst_margin, worst_bound, worst_obs, worst_variant, failed)
    rows = []
    lines_out = []

    def say(s=""):
        lines_out.append(s)

    bad = False
    for spec in a.variants:
        name, rc, secs = spec.split("=")
        rc = int(rc)
        path = os.path.join(a.out, name + ".tsv")
        n = n_fail = 0
        v_worst = math.inf
        v_worst_site = "-"
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    parts = line.rstrip("\n").split("\t")
                    if len(parts) not in (3, 4):
                        continue
                    site, obs, bound = parts[0], float(parts[1]), float(parts[2])
                    required = float(parts[3]) if len(parts) == 4 else None
                    n += 1
                    m = margin(obs, bound)
                    failed = math.isnan(m) or obs > bound
                    n_fail += failed
                    s = sites.setdefault(site, {"n": 0, "max_obs": 0.0, "worst_margin": math.inf, "worst_bound": bound,
                                                "worst_obs": 0.0, "worst_variant": name, "failed": 0,
                                                "variants": set(), "required": None})
                    if required is not None:
                        s["required"] = required if s["required"] is None else min(s["required"], required)
                    s["n"] += 1
                    s["variants"].add(name)
                    s["failed"] += failed
                    if math.isnan(obs) or (not math.isnan(s["max_obs"]) and obs > s["max_obs"]):
                        s["max_obs"] = obs
                    if s["n"] == 1 or worse(m, s["worst_margin"]):
                        s["worst_margin"], s["worst_bound"], s["worst_obs"], s["worst_variant"] = m, bound, obs, name
                    if worse(m, v_worst):
                        v_worst, v_worst_site = m, site
        ok = rc == 0 and n_fail == 0
        bad = bad or not ok
        rows.append((name, rc, int(secs), n, n_fail, v_worst, v_worst_site, ok))

    say("Per variant")
    say(f"  {'variant':<9} {'ctest':<6} {'time':>7} {'checks':>8} {'failed':>6}  smallest margin (site)")
    for name, rc, secs, n, n_fail, vw, vws, ok in rows:
        say(f"  {name:<9} {'pass' if rc == 0 else f'FAIL {rc}':<6} {secs:>6}s {n:>8} {n_fail:>6}  {fmt_margin(vw)} ({vws})")
    say()

    def required(d):
        return a.min_margin if d["required"] is None else d["required"]

    low = [s for s, d in sites.items() if worse(d["worst_margin"], required(d))]
    bad = bad or bool(low)
    say(f"Per check site, smallest margin first ({len(sites)} sites; margin = bound / observed, "
        f"required >= {a.min_margin:g})")
    say(f"  {'margin':>8}  {'bound':>10}  {'observed':>10}  {'max obs.':>10}  {'checks':>6}  {'variant':<9} site")
    order = sorted(sites.items(), key=lambda kv: (-math.inf if math.isnan(kv[1]["worst_margin"])
                                                  else kv[1]["worst_margin"], kv[0]))
    for site, d in order:
        flag = "  <-- FAILED" if d["failed"] else ("  <-- margin" if site in low else "")
        if d["required"] is not None:
            flag += f"  (declares margin {d['required']:g}: a comparison with a reference's own error)"
        say(f"  {fmt_margin(d['worst_margin']):>8}  {d['worst_bound']:>10.3g}  {d['worst_obs']:>10.3g}  "
            f"{d['max_obs']:>10.3g}  {d['n']:>6}  {d['worst_variant']:<9} {site}{flag}")
    say()
    if not sites:
        say("no checks were recorded (is CUSET_TOLERANCE_LOG reaching the tests?)")
        bad = True
    say("RESULT: " + ("FAIL" if bad else "ok") +
        f" ({sum(1 for r in rows if not r[7])} variant(s) failing, {len(low)} site(s) below margin {a.min_margin:g})")
    text = "\n".join(lines_out) + "\n"
    sys.stdout.write(text)
    with open(os.path.join(a.out, "report.txt"), "w") as f:
        f.write(text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
