#!/usr/bin/env python3
"""Same-run comparison of hierarchical and flat all-reduce on emulated hosts, in rounds.

Each round runs `netreduce bench --local P --hosts H` for every configuration
(algorithm/transport), once hierarchical (shared memory within each emulated host, the
algorithm across hosts: Parallel NetReduce for netreduce) and once --flat (the algorithm over
every rank, as if no ranks shared a host), one after the other. The table gives, per
configuration, the median and range over rounds of the mean time per call, busbw
(algbw x 2(P-1)/P), the hierarchical run's time against the flat run's of the same round,
the bytes each emulated host sent per all-reduce over the transport (the sum over its ranks)
against the tensor size, and CPU per GB per rank. In-place float32 sum, every result
checked exact by the bench.

  bench/hosts.py                                   3 rounds, P = 4 as 2 hosts x 2, 64 MiB
  bench/hosts.py --rounds 5 --configs ring/tcp --bytes 16M
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def size_bytes(text):
    return int(text[:-1]) * UNITS[text[-1]] if text[-1] in UNITS else int(text)


def bench(p, hosts, nbytes, algorithm, transport, flat, iters, warmup):
    cmd = [os.path.join(ROOT, "bin", "netreduce"), "bench", "--local", str(p), "--hosts", str(hosts),
           "--algorithm", algorithm, "--transport", transport, "-b", str(nbytes), "-e", str(nbytes),
           "-n", str(iters), "-w", str(warmup), "--json"] + (["--flat"] if flat else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=1800)
    row = json.loads(out.stdout)["rows"][0]["in_place"]
    if row["wrong"] != 0:
        sys.exit(f"hosts.py: {' '.join(cmd)}: {row['wrong']} wrong elements")
    return {"time_us": row["time_us"], "busbw": row["busbw_gbps"], "wire_per_worker": row["wire_bytes_per_worker"],
            "cpu_s_per_gb": row["cpu_s_per_gb"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--hosts", type=int, default=2)
    ap.add_argument("--bytes", default="64M")
    ap.add_argument("--configs", default="netreduce/soft,ring/soft,ring/tcp")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    a = ap.parse_args()
    nbytes = size_bytes(a.bytes)
    per_host = a.ranks // a.hosts
    rounds = []
    for rnd in range(a.rounds):
        got = {}
        for c in a.configs.split(","):
            algorithm, transport = c.split("/")
            for flat in (False, True):
                got[(c, flat)] = bench(a.ranks, a.hosts, nbytes, algorithm, transport, flat, a.iters, a.warmup)
                print(f"round {rnd + 1}/{a.rounds} {c} {'flat' if flat else 'hierarchical'}: "
                      f"{got[(c, flat)]['time_us']:.0f} us", file=sys.stderr, flush=True)
        rounds.append(got)

    def spread(values, fmt):
        return f"{fmt % statistics.median(values)} ({fmt % min(values)}–{fmt % max(values)})"

    print(f"{a.rounds} rounds, P = {a.ranks} as {a.hosts} emulated hosts x {per_host}, {nbytes / (1 << 20):g} MiB in place, "
          f"netreduce bench -n {a.iters} -w {a.warmup}; median (range)")
    print()
    print("| configuration | run | time ms | × flat's time | busbw GB/s | wire bytes per host per call | × tensor "
          "| CPU s/GB per rank |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for c in a.configs.split(","):
        for flat in (False, True):
            res = [r[(c, flat)] for r in rounds]
            vs = "" if flat else spread([r[(c, False)]["time_us"] / r[(c, True)]["time_us"] for r in rounds], "%.2f")
            wire = [x["wire_per_worker"] * per_host for x in res]
            print(f"| {c} | {'flat' if flat else 'hierarchical'} | {spread([x['time_us'] / 1e3 for x in res], '%.1f')} "
                  f"| {vs} | {spread([x['busbw'] for x in res], '%.3f')} | {statistics.median(wire) / 1e6:.1f} MB "
                  f"| {statistics.median(wire) / nbytes:.2f} | {spread([x['cpu_s_per_gb'] for x in res], '%.3f')} |")


if __name__ == "__main__":
    main()
