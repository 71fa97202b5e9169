#!/usr/bin/env python3
"""Interleaved rounds of `netreduce bench` variants, for before/after and A/B figures.

Each variant is NAME=ARGS, where ARGS are `netreduce bench` arguments, optionally preceded by
environment settings (KEY=VALUE ...) for the run; every round runs every variant once, one
after the other, so that a slow spell of a shared machine hits all alike. The table gives,
per variant and size, the median and range over rounds of the in-place time per call,
busbw and the workers' CPU per GB, each variant's busbw and CPU against the first
variant's with as many ranks (--local) in the same round (or against its own run's first
entry, below; a size the reference did not time is not compared), and its out-of-place
busbw against its in-place busbw of the same run; for netreduce, the switch data plane's
CPU per GB over the same calls. A variant that times several algorithms in the same processes (`--algorithm ring,netreduce`), or one
algorithm with several settings (`--algorithm ring,ring@NETREDUCE_RING_MESSAGE_BYTES=524288`, or
a transport's device property, `ring@tcp.spinMicros=0`),
gives a row per entry, named "NAME ENTRY", each compared with the first entry of the same
run: the steadiest comparison this machine allows.

  bench/rounds.py --rounds 3 \\
    'netreduce=--local 4 --algorithm netreduce --transport soft -b 64M -e 64M -n 5 -w 2 -T 0' \\
    'netreduce 16K x 4=NETREDUCE_MESSAGE_BYTES=16384 NETREDUCE_WINDOW=4 --local 4 --algorithm netreduce -b 64M -e 64M -n 5 -w 2 -T 0' \\
    'ring=--local 4 --algorithm ring --transport soft -b 64M -e 64M -n 5 -w 2 -T 0'
  bench/rounds.py --rounds 5 \
    'same=--local 4 --algorithm ring,netreduce --transport soft -b 64M -e 64M -n 20 -w 3 -T 0 -W 10'
  bench/rounds.py 'before=NETREDUCE_JAR=before.jar --local 2 --algorithm ring --transport tcp -b 64M -e 64M' \
    'after=--local 2 --algorithm ring --transport tcp -b 64M -e 64M'     # another build against this one
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(spec):
    name, args = spec.split("=", 1)
    env = dict(os.environ)
    words = args.split()
    while words and "=" in words[0] and not words[0].startswith("-"):
        k, v = words.pop(0).split("=", 1)
        env[k] = v
    # NETREDUCE_JAR=path runs another build (java -jar path), for before/after figures.
    cmd = ["java", "-jar", env.pop("NETREDUCE_JAR")] if "NETREDUCE_JAR" in env else [os.path.join(ROOT, "bin", "netreduce")]
    out = subprocess.run([*cmd, "bench", *words, "--json"], check=True,
                         capture_output=True, text=True, env=env, timeout=1800)
    doc = json.loads(out.stdout)
    several = "," in doc["algorithm"]
    rows = {}
    for row in doc["rows"]:
        r = row["in_place"]
        label = f"{name} {r['algorithm']}" if several else name
        if r["wrong"] != 0:
            sys.exit(f"rounds.py: {label}: {r['wrong']} wrong elements at {row['size']} B")
        o = row["out_of_place"]
        if o["wrong"] != 0:
            sys.exit(f"rounds.py: {label}: {o['wrong']} wrong elements out of place at {row['size']} B")
        rows.setdefault(label, {})[row["size"]] = {
            "time_us": r["time_us"], "busbw": r["busbw_gbps"], "cpu": r["cpu_s_per_gb"],
            "out_busbw": o["busbw_gbps"], "switch_cpu": r.get("switch_cpu_s_per_gb")}
    return name, rows


def ranks(spec):
    """The ranks a variant runs (its --local), or None if it does not say."""
    words = spec.split("=", 1)[1].split()
    for i, w in enumerate(words[:-1]):
        if w == "--local":
            return words[i + 1]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--settle", type=float, default=3.0,
                    help="seconds to wait before each run, for the memory the last one freed to settle "
                         "(as bench/compare.py does)")
    ap.add_argument("variants", nargs="+", help="NAME=[KEY=VALUE ...] BENCH ARGS")
    a = ap.parse_args()
    rounds = []
    run_of = {}  # row label -> the variant whose run produced it
    ranks_of = {spec.split("=", 1)[0]: ranks(spec) for spec in a.variants}
    for rnd in range(a.rounds):
        got = {}
        for spec in a.variants:
            time.sleep(a.settle)
            name, by_label = run(spec)
            for label, rows in by_label.items():
                got[label] = rows
                run_of[label] = name
                print(f"round {rnd + 1}/{a.rounds} {label}: " + ", ".join(f"{s} B {v['time_us']:.0f} us"
                                                                       for s, v in rows.items()), file=sys.stderr,
                      flush=True)
        rounds.append(got)

    def spread(values, fmt):
        return f"{fmt % statistics.median(values)} ({fmt % min(values)}–{fmt % max(values)})"

    def human(size):
        return f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"

    names = list(rounds[0])
    # A row is compared with the first row of its own run when that run timed several
    # algorithms or settings in the same processes, else with the first variant that ran
    # as many ranks (variants at P = 2 and P = 4 in one call compare within their P).
    reference = {}
    for name in names:
        same_run = [n for n in names if run_of[n] == run_of[name]]
        same_ranks = [n for n in names if ranks_of[run_of[n]] == ranks_of[run_of[name]]]
        reference[name] = same_run[0] if len(same_run) > 1 else same_ranks[0]
    firsts = set(reference.values())
    against = next(iter(firsts)) if len(firsts) == 1 else "its reference"
    print(f"{a.rounds} interleaved rounds, in place, median (range)")
    if len(firsts) > 1:
        print("references: " + ", ".join(f"{n} against {reference[n]}" for n in names if reference[n] != n))
    print()
    print(f"| variant | size | time µs | busbw GB/s | × {against}'s busbw | CPU s/GB per rank | × {against}'s CPU "
          "| out of place busbw × in place | switch CPU s/GB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in names:
        for size in rounds[0][name]:
            res = [r[name][size] for r in rounds]
            base = [r[reference[name]].get(size) for r in rounds]
            if any(b is None for b in base):
                base = [r[name][size] for r in rounds]  # the reference did not time this size
            vs = "" if base[0] is res[0] else spread([x["busbw"] / b["busbw"] for x, b in zip(res, base)], "%.2f")
            cvs = "" if base[0] is res[0] else spread([x["cpu"] / b["cpu"] for x, b in zip(res, base)], "%.2f")
            sw = [x["switch_cpu"] for x in res if x["switch_cpu"] is not None]
            print(f"| {name} | {human(size)} | {spread([x['time_us'] for x in res], '%.1f')} "
                  f"| {spread([x['busbw'] for x in res], '%.3f')} | {vs} | {spread([x['cpu'] for x in res], '%.3f')} "
                  f"| {cvs} | {spread([x['out_busbw'] / x['busbw'] for x in res], '%.2f')} "
                  f"| {spread(sw, '%.3f') if sw else ''} |")


if __name__ == "__main__":
    main()
