#!/usr/bin/env python3
# The tables of bench/period_cost.sh from its runs, standard library only. Usage:
#   period_cost.py RUNS DOSE_GAP_NS DEFAULT_GAP_NS
# RUNS has one line a run: "BLOCK WORKLOAD MODE PERIOD CPU PROF SAMPLES HANDLER_NS HANDLER_RUNS
# RESTARTS" (mode none, fixed, phase, random or dose; all but the first four per unit of
# work). A mode's overhead in a block is its cost over the block's run alone, relative to it:
# on the program, CPU / CPU alone - 1; on program and profiler, (CPU + PROF) / CPU alone - 1.
# The default's cost relative to fixed's is the ratio of their mean overheads, with a 95%
# percentile bootstrap over the blocks (10,000 resamples, fixed seed); pooled, each block
# sums its workloads' overheads. The dose (phase at 10 kHz with a short gap) prices one
# restart, c = (extra - s x samples) / restarts, with s the fixed mode's extra CPU per
# sample, from which the default's ratio at each rate follows: per sampled CPU (the timer
# and the restarts run on every CPU, the program there or not) 1 + c x (1 / the default
# gap) / (s x rate); as the programs had it, 1 + c x their restarts / (s x their samples),
# which grows as a loaded machine gives the program less of a CPU.
import collections
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ci import mean_ci  # noqa: E402

F = ("cpu", "prof", "n", "hns", "hruns", "restarts")


def load(path):
    runs = collections.defaultdict(dict)	# (block, workload) -> (mode, period) -> fields
    for line in open(path):
        v = line.split()
        if len(v) != 10:
            continue
        b, w, m, p = v[0], v[1], v[2], int(v[3])
        runs[(b, w)][(m, p)] = dict(zip(F, (float(x) for x in v[4:])))
    return runs


def boot(blocks, stat, n=10000):
    """stat over the blocks, and its 95% percentile bootstrap interval"""
    rng = random.Random(1)
    est = stat(blocks)
    vals = []
    for _ in range(n):
        v = stat([rng.choice(blocks) for _ in blocks])
        if v == v:
            vals.append(v)
    vals.sort()
    if not vals:
        return est, float("nan"), float("nan")
    return est, vals[int(0.025 * (len(vals) - 1))], vals[int(0.975 * (len(vals) - 1))]


def overhead(r, mode, period, total):
    """a block's overhead of mode at period, relative to the run alone"""
    m = r[(mode, period)]
    return (m["cpu"] + (m["prof"] if total else 0)) / r[("none", 0)]["cpu"] - 1


def ratio(blocks, mode, period, total):
    def stat(bs):
        a = sum(sum(overhead(r, mode, period, total) for r in blk) for blk in bs)
        f = sum(sum(overhead(r, "fixed", period, total) for r in blk) for blk in bs)
        return a / f if f else float("nan")
    return boot(blocks, stat)


def fmt(t, d=2):
    return "%.*fx [%.*f, %.*f]" % (d, t[0], d, t[1], d, t[2])


def rate_name(p):
    return "%.3g kHz" % (1e6 / p) if p < 1000000 else "%.0f Hz" % (1e9 / p)


def main():
    runs = load(sys.argv[1])
    gap = float(sys.argv[2])
    default_gap = float(sys.argv[3])
    # a (block, workload) with a run missing (a failed run) is left out
    keys = {k for r in runs.values() for k in r}
    complete = {k: r for k, r in runs.items() if keys <= set(r)}
    workloads = sorted({w for _, w in complete})
    periods = sorted({p for r in complete.values() for (m, p) in r if m == "fixed"})
    by_block = collections.defaultdict(list)
    for (b, w), r in complete.items():
        by_block[b].append(r)

    print("| workload | rate | mode | program's CPU: slowdown [95%] | overhead / fixed's, "
          "program's CPU [95%] | overhead / fixed's, program + record CPU [95%] | "
          "program + record: overhead - fixed's, points [95%] |")
    print("|---|---|---|---|---|---|---|")
    for w in workloads + ["all three"]:
        if w == "all three":
            blocks = [blk for blk in by_block.values() if len(blk) == len(workloads)]
        else:
            blocks = [[r] for (b, x), r in complete.items() if x == w]
        for p in periods:
            for mode in ("fixed", "phase", "random"):
                if w == "all three":
                    slow = "-"
                else:
                    s = mean_ci([blk[0][(mode, p)]["cpu"] / blk[0][("none", 0)]["cpu"]
                                 for blk in blocks])
                    slow = "%.4f [%.4f, %.4f]" % s
                rel = tot = diff = "-"
                if mode != "fixed":
                    rel = fmt(ratio(blocks, mode, p, False))
                    tot = fmt(ratio(blocks, mode, p, True))
                    d = mean_ci([100 * sum(overhead(r, mode, p, True) -
                                           overhead(r, "fixed", p, True) for r in blk)
                                 / len(blk) for blk in blocks])
                    diff = "%+.2f [%+.2f, %+.2f]" % d
                name = "%s (%d blocks)" % (w, len(blocks)) if mode == "fixed" and p == periods[0] else ""
                print("| %s | %s | %s | %s | %s | %s | %s |" % (
                    name, rate_name(p) if mode == "fixed" else "", mode, slow, rel, tot, diff))

    # the component view, pooled over workloads and blocks: per sample of the program
    print()
    print("| rate | mode | handler ns / run (BPF stats) | record's CPU, us / sample | "
          "program's extra CPU, us / sample | restarts or re-arms / s of the program's CPU |")
    print("|---|---|---|---|---|---|")
    rs = list(complete.values())
    for p, mode in [(p, m) for p in periods for m in ("fixed", "phase", "random")] + \
            [(100000, "dose")]:
        if not all((mode, p) in r for r in rs):
            continue
        m = [r[(mode, p)] for r in rs]
        # runs while another session had the BPF statistics off have none
        hns = sum(x["hns"] for x in m) / max(sum(x["hruns"] for x in m if x["hns"]), 1)
        n = sum(x["n"] for x in m)
        prof = sum(x["prof"] for x in m) / n * 1e6
        extra = sum(x["cpu"] - r[("none", 0)]["cpu"] for x, r in zip(m, rs)) / n * 1e6
        rps = sum(x["restarts"] for x in m) / sum(x["cpu"] for x in m)
        label = mode if mode != "dose" else "phase, %.0f ms gap" % (gap / 1e6)
        print("| %s | %s | %.0f | %.2f | %.2f | %.1f |" % (
            rate_name(p), label, hns, prof, extra, rps))

    # one restart's price from the dose, and the default's ratio it gives at each rate
    if not all(("dose", 100000) in r and ("fixed", 100000) in r for r in rs):
        return
    blocks = [blk for blk in by_block.values() if len(blk) == len(workloads)]

    def extra(r, mode, p):
        m = r[(mode, p)]
        return m["cpu"] + m["prof"] - r[("none", 0)]["cpu"]

    def per_restart(bs):
        rr = [r for blk in bs for r in blk]
        s = sum(extra(r, "fixed", 100000) for r in rr) / sum(r[("fixed", 100000)]["n"] for r in rr)
        d = sum(extra(r, "dose", 100000) - s * r[("dose", 100000)]["n"] for r in rr)
        return d / sum(r[("dose", 100000)]["restarts"] for r in rr)

    def predicted(p):
        def stat(bs):
            rr = [r for blk in bs for r in blk]
            c = per_restart(bs)
            restarts = sum(r[("phase", p)]["restarts"] for r in rr)
            # fixed's cost at p: measured there, or its 10 kHz cost per sample times p's samples
            s10 = sum(extra(r, "fixed", 100000) for r in rr) / sum(r[("fixed", 100000)]["n"] for r in rr)
            return 1 + c * restarts / (s10 * sum(r[("fixed", p)]["n"] for r in rr))
        return stat

    def per_cpu(p):
        # the timer fires on every sampled CPU, the program on it or not, and so do the
        # restarts: per CPU and second, fixed costs (1e9 / p) samples' worth, phase adds
        # 1e9 / the default gap restarts
        def stat(bs):
            rr = [r for blk in bs for r in blk]
            s10 = sum(extra(r, "fixed", 100000) for r in rr) / sum(r[("fixed", 100000)]["n"] for r in rr)
            return 1 + per_restart(bs) * (1e9 / default_gap) / (s10 * 1e9 / p)
        return stat

    c = boot(blocks, per_restart)
    s10 = boot(blocks, lambda bs: sum(extra(r, "fixed", 100000) for blk in bs for r in blk) /
               sum(r[("fixed", 100000)]["n"] for blk in bs for r in blk))
    print()
    print("One restart, priced by the dose (phase at 10 kHz, %.0f ms mean gap; program + record "
          "CPU less fixed's cost per sample times its samples): **%.1f us [%.1f, %.1f]**; a "
          "fixed-mode sample (program + record CPU at 10 kHz): %.1f us [%.1f, %.1f]." %
          (gap / 1e6, c[0] * 1e6, c[1] * 1e6, c[2] * 1e6, s10[0] * 1e6, s10[1] * 1e6, s10[2] * 1e6))
    print()
    print("| rate | the default's overhead / fixed's, per sampled CPU (%.0f restarts a second) | "
          "... as this run's programs had it (their restarts per second of their CPU) |" %
          (1e9 / default_gap))
    print("|---|---|---|")
    for p in periods:
        print("| %s | %s | %s |" % (rate_name(p), fmt(boot(blocks, per_cpu(p)), 4),
                                    fmt(boot(blocks, predicted(p)), 4)))
if __name__ == "__main__":
    main()
