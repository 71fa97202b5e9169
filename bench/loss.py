#!/usr/bin/env python3
"""Goodput against injected loss: interleaved rounds of `netreduce demo --loss`.

Each round runs every loss rate once, one after the other (every algorithm in the same run),
so that a slow spell of a shared machine hits all alike. Per algorithm and loss rate the
table gives the median and range over rounds of the time per call, the goodput against the
lossless run of the same round (lossless time / lossy time), the wire bytes per worker
against the lossless run's, and, summed over rounds, the ACK timeouts, go-back-N
retransmissions, tail probes, RNR NAKs received and packets receivers dropped as out of
sequence. Every result must be exact (the demo checks each against a reference).

  bench/loss.py --rounds 5 --ranks 4 --size 16M --losses 0,0.0001,0.001,0.01
  bench/loss.py --netreduce 'java -jar old.jar' ...    # another build, for before/after
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, args, loss):
    out = subprocess.run([*cmd, "demo", "--ranks", str(args.ranks), "--sizes", args.size, "--loss", str(loss),
                          "-n", str(args.iters), "--algorithms", args.algorithms, "--json"],
                         check=True, capture_output=True, text=True, timeout=1800)
    d = json.loads(out.stdout)
    if d["wrong_total"] != 0:
        sys.exit(f"loss.py: {d['wrong_total']} wrong elements at loss {loss}")
    return {a: rows[0] for a, rows in d["algorithms"].items()}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--size", default="16M")
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--losses", default="0,0.0001,0.001,0.01")
    p.add_argument("--algorithms", default="ring,netreduce")
    p.add_argument("--netreduce", default=os.path.join(ROOT, "bin", "netreduce"),
                   help="command that runs netreduce (default: this checkout's bin/netreduce)")
    args = p.parse_args()
    cmd = shlex.split(args.netreduce)
    losses = [float(x) for x in args.losses.split(",")]
    if losses[0] != 0:
        losses.insert(0, 0.0)
    results = []  # per round: {loss: {algorithm: row}}
    for r in range(args.rounds):
        results.append({loss: run(cmd, args, loss) for loss in losses})
        print(f"loss.py: round {r + 1}/{args.rounds} done", file=sys.stderr)
    print(f"P = {args.ranks}, {args.size}, {args.iters} calls per run, {args.rounds} rounds; median (range)")
    print("| algorithm | loss | time per call, ms | goodput × lossless | wire × lossless | ACK timeouts | retransmitted "
          "| tail probes | RNR NAKs | dropped out of sequence |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for a in args.algorithms.split(","):
        for loss in losses:
            times = [rd[loss][a]["time_us"] / 1e3 for rd in results]
            good = [rd[0.0][a]["time_us"] / rd[loss][a]["time_us"] for rd in results]
            wire = [rd[loss][a]["wire_bytes_per_worker"] / rd[0.0][a]["wire_bytes_per_worker"] for rd in results]
            timeouts = sum(rd[loss][a].get("ack_timeouts", 0) for rd in results)
            retrans = sum(rd[loss][a]["retransmitted_packets"] for rd in results)
            # Why it retransmitted, from the rows' transport counters (builds that have them).
            def counter(name):
                return sum(rd[loss][a].get("transport_counters", {}).get(name, 0) for rd in results)
            print(f"| {a} | {loss * 100:g} % | {statistics.median(times):.1f} ({min(times):.1f}–{max(times):.1f}) "
                  f"| {statistics.median(good):.2f} ({min(good):.2f}–{max(good):.2f}) "
                  f"| {statistics.median(wire):.2f} | {timeouts} | {retrans} | {counter('tail_probes')} "
                  f"| {counter('rnr_naks_received')} | {counter('drop_out_of_sequence')} |")


if __name__ == "__main__":
    main()
