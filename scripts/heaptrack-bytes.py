#!/usr/bin/python3.11
# Bytes allocated per function from heaptrack's data file, beside an hsbpf record --memory
# profile's estimates and their 95% intervals (docs/memory.md, tests/test_live_memory.c).
"""Bytes allocated per function from a heaptrack recording, beside hsbpf's estimate.

heaptrack_print gives calls, peaks, leaks and temporary allocations by backtrace, not the bytes
each function allocated over the run; its data file has them. The file (zstd or gzip, as
heaptrack writes it, after heaptrack_interpret) is text, numbers in hex (format 2 and 3):

    s LEN TEXT                  a string (1-based index)
    i IP MODULE [FN FILE LINE]* an instruction: its module's string, then its function's
                                (and those inlined there) name, file and line strings
    t IP PARENT                 a trace node (1-based): an instruction, its caller's node
    a SIZE TRACE                an allocation kind (0-based): its size and backtrace
    + ALLOC                     one allocation of that kind; '-' one freed

A frame without a name is "[unknown] (object)", as in hsbpf's folded stacks; names lose what
only one tool gives them (GCC's clone suffixes, symbol versions, "(inlined)"). A function's
bytes are those of every allocation with it in its backtrace (once per
allocation, as pprof's cum and hsbpf's folded stacks count). With --hsbpf PROFILE the same
functions from hsbpf report's folded alloc_space and alloc_objects stacks, and hsbpf's 95%
interval: a stack estimated at B bytes and O objects holds allocations of s = B/O bytes on
average, each sampled with p = 1 - exp(-s/period), and B's variance is estimated as
B s (1 - p)/p (n s^2 (1 - p)/p at n = O): right for a stack of one size, too small for one of
mixed sizes (a realloc chain from 32 bytes to megabytes), where the few small ones sampled
carry most of it. Whatever the sizes, a sampled allocation's share of the unbiased variance
estimate, w (w - s) with w = s/p, is at most w period, so B period bounds it: the second
interval, ci95_bound. Stacks are sampled independently (a Poisson process over bytes), so a
function's variance is its stacks' sum.

usage: heaptrack-bytes.py HEAPTRACK_FILE [--hsbpf PROFILE] [--bin HSBPF] [--top N]
                          [--function NAME]...
Prints a header comment, then tab-separated rows: function, heaptrack_bytes, calls, and with
--hsbpf: hsbpf_bytes, ci95 (1.96 sd, bytes), ci95_bound, within (yes: within ci95; bound:
only within ci95_bound; no). Rows: --function's, else the
--top N by heaptrack's bytes. docs/memory.md ("Against heaptrack") has figures made with it.
"""

import argparse
import gzip
import math
import os
import re
import subprocess
import sys


# what one tool's name has and the other's lacks: hsbpf's are the ELF symbols (GCC's clones
# "dictresize.lto_priv.0", "PyNumber_Multiply.part.0"; versions "@@GLIBC_2.34"), an inlined
# function marked "(inlined)"; heaptrack's are DWARF's
CLONE = re.compile(r'(\.(lto_priv|part|constprop|isra|cold)(\.[0-9]+)?)+$')


def normalize(name):
    name = name.removesuffix(' (inlined)').split('@')[0]
    return CLONE.sub('', name)


def open_text(path):
    with open(path, 'rb') as f:
        magic = f.read(4)
    if magic[:2] == b'\x1f\x8b':
        return gzip.open(path, 'rt', errors='replace')
    if magic == b'\x28\xb5\x2f\xfd':
        proc = subprocess.run(['zstd', '-dc', path], capture_output=True, check=True)
        return proc.stdout.decode(errors='replace').splitlines()
    return open(path, errors='replace')


def heaptrack_bytes(path):
    """{function: [bytes, calls]}, total bytes, total calls"""
    strings, ips, traces, kinds = [None], [None], [None], []
    per_kind = []          # allocations of each kind
    for line in open_text(path):
        line = line.rstrip('\n')
        if not line or line[0] == '#':
            continue
        tag = line[0]
        if tag == 'v':
            version = int(line.split()[2], 16) if len(line.split()) > 2 else 1
            if version < 2:
                sys.exit(f"heaptrack-bytes: '{path}' is heaptrack's file format {version}: "
                         "2 or 3 wanted (heaptrack 1.1 or later)")
        elif tag == 's':
            # "s LEN TEXT": the text may hold spaces
            parts = line.split(' ', 2)
            strings.append(parts[2] if len(parts) > 2 else '')
        elif tag == 'i':
            f = [int(x, 16) for x in line.split()[1:]]
            module = f[1]
            # a frame's file and line may be missing (a symbol without debug information)
            names = [f[k] for k in range(2, len(f), 3)]
            ips.append((module, names))
        elif tag == 't':
            ip, parent = (int(x, 16) for x in line.split()[1:3])
            traces.append((ip, parent))
        elif tag == 'a':
            size, trace = (int(x, 16) for x in line.split()[1:3])
            kinds.append((size, trace))
            per_kind.append(0)
        elif tag == '+':
            per_kind[int(line.split()[1], 16)] += 1
    if not kinds:
        sys.exit(f"heaptrack-bytes: no allocations in '{path}'")

    def name(module, fn):
        if fn:
            return normalize(strings[fn])
        return f'[unknown] ({os.path.basename(strings[module] or "?")})'

    funcs = {}
    total = calls = 0
    for (size, trace), n in zip(kinds, per_kind):
        if not n:
            continue
        total += size * n
        calls += n
        seen = set()
        while trace:
            ip, trace = traces[trace]
            module, fns = ips[ip]
            for fn in fns or [0]:
                seen.add(name(module, fn))
        for f in seen:
            e = funcs.setdefault(f, [0, 0])
            e[0] += size * n
            e[1] += n
    return funcs, total, calls


def folded(hsbpf, profile, sample_type):
    """{stack line: amount} from hsbpf report's folded stacks"""
    proc = subprocess.run([hsbpf, 'report', '-i', profile, '--format', 'folded',
                           '--sample-type', sample_type], capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f'heaptrack-bytes: hsbpf report failed: {proc.stderr.strip()}')
    stacks = {}
    for line in proc.stdout.splitlines():
        stack, _, amount = line.rpartition(' ')
        stacks[stack] = stacks.get(stack, 0) + int(amount)
    return stacks


def alloc_period(hsbpf, profile):
    proc = subprocess.run([hsbpf, 'report', '-i', profile, '--no-children'],
                          capture_output=True, text=True)
    m = re.search(r'alloc period ([0-9.]+) (B|KiB|MiB|GiB)', proc.stdout)
    if not m:
        sys.exit(f"heaptrack-bytes: '{profile}' says no alloc period (record --memory)")
    return float(m.group(1)) * 1024 ** ['B', 'KiB', 'MiB', 'GiB'].index(m.group(2))


def hsbpf_bytes(hsbpf, profile):
    """{function: [bytes, variance, its bound]} from the profile's stacks, and their total
    bytes"""
    period = alloc_period(hsbpf, profile)
    objects = folded(hsbpf, profile, 'alloc_objects')
    funcs = {}
    total = 0
    for stack, b in folded(hsbpf, profile, 'alloc_space').items():
        total += b
        o = objects.get(stack, 0) or 1
        s = b / o
        p = -math.expm1(-s / period)
        var = b * s * (1 - p) / p
        # the first field is the command's name, not a frame
        for f in {normalize(f) for f in stack.split(';')[1:]}:
            e = funcs.setdefault(f, [0, 0.0, 0.0])
            e[0] += b
            e[1] += var
            e[2] += b * period
    return funcs, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('heaptrack')
    ap.add_argument('--hsbpf', metavar='PROFILE')
    ap.add_argument('--bin', default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  '..', 'hsbpf'))
    ap.add_argument('--top', type=int, default=10)
    ap.add_argument('--function', action='append', default=[])
    a = ap.parse_args()

    ht, total, calls = heaptrack_bytes(a.heaptrack)
    names = a.function or sorted(ht, key=lambda f: -ht[f][0])[:a.top]
    hs, hs_total = hsbpf_bytes(a.bin, a.hsbpf) if a.hsbpf else (None, 0)
    print(f'# heaptrack {a.heaptrack}: {calls} calls, {total} bytes' +
          (f'; hsbpf {a.hsbpf}: {hs_total} bytes estimated' if hs else ''))
    print('function\theaptrack_bytes\tcalls' + ('\thsbpf_bytes\tci95\tci95_bound\twithin' if hs else ''))
    for f in names:
        b, n = ht.get(f, (0, 0))
        row = f'{f}\t{b}\t{n}'
        if hs is not None:
            est, var, bound = hs.get(f, (0, 0.0, 0.0))
            ci, ci_bound = 1.96 * math.sqrt(var), 1.96 * math.sqrt(bound)
            within = 'yes' if abs(est - b) <= ci else 'bound' if abs(est - b) <= ci_bound else 'no'
            row += f'\t{est}\t{ci:.0f}\t{ci_bound:.0f}\t{within}'
        print(row)


if __name__ == '__main__':
    main()
