#!/usr/bin/env python3
# 95% intervals for the period benchmarks (bench/period_*.sh), standard library only. Usage:
#   ci.py mean V...            mean and Student's t interval: "mean lo hi n"
#   ci.py ratio A1,B1 A2,B2 ...  mean(A) / mean(B) over paired blocks, percentile bootstrap
#                              (10,000 resamples of the blocks, fixed seed): "ratio lo hi n"
# A ratio of two overheads (slowdown - 1) has a denominator near zero when the overhead is
# small, so its interval is the bootstrap's, not the delta method's.
import random
import statistics
import sys

# two-sided 95% quantiles of Student's t for 1..30 degrees of freedom
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
       2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
       2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t95(df):
    return T95[df - 1] if df <= len(T95) else 1.960


def mean_ci(v):
    m = statistics.fmean(v)
    if len(v) < 2:
        return m, float("nan"), float("nan")
    h = t95(len(v) - 1) * statistics.stdev(v) / len(v) ** 0.5
    return m, m - h, m + h


def ratio_ci(pairs):
    def ratio(ps):
        b = sum(p[1] for p in ps)
        return sum(p[0] for p in ps) / b if b else float("nan")

    rng = random.Random(1)
    boot = sorted(ratio([rng.choice(pairs) for _ in pairs]) for _ in range(10000))
    boot = [r for r in boot if r == r]
    if not boot:
        return ratio(pairs), float("nan"), float("nan")
    return ratio(pairs), boot[int(0.025 * (len(boot) - 1))], boot[int(0.975 * (len(boot) - 1))]


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("mean", "ratio"):
        sys.exit("usage: ci.py mean V... | ratio A,B...")
    if sys.argv[1] == "mean":
        v = [float(x) for x in sys.argv[2:]]
        print("%.6g %.6g %.6g %d" % (*mean_ci(v), len(v)))
    else:
        pairs = [tuple(float(x) for x in a.split(",")) for a in sys.argv[2:]]
        print("%.6g %.6g %.6g %d" % (*ratio_ci(pairs), len(pairs)))


if __name__ == "__main__":
    main()
