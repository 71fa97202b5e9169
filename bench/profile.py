#!/usr/bin/env python3
"""Where a rank's CPU goes, per algorithm, over the same run's timed calls, and the floor
that leaves for netreduce's ranks and the switch on this host.

Runs `netreduce bench` with several algorithms in the same rank processes (their timed
calls alternate in blocks), async-profiler sampling every rank's CPU (and, with --switch,
the process that holds the software switch). Only samples inside the bench's timed blocks
count, without the bench's own work there (refilling an in-place input); each is put in one
component by its stack:

  sums                  the reduction kernels (the ring's; the switch's lanes)
  ICRC                  RoCEv2's invariant CRC, computed on send and checked on receive
  kernel copy out       the kernel copying a send's bytes from user memory into its buffers
  kernel copy in        the kernel copying a receive's bytes out of its buffers
  copy into place       user-space copies (a received payload into its destination)
  context switches      the cost of being switched back in after a sleep or a yield
  kernel, other         system calls, the network stack, scheduling, everything else in the kernel
  user, other           the rest: the JVM, Java code, spinning

It prints each component's CPU milliseconds per call over all ranks (a sample is 1 ms).
With ring and netreduce in the same run it adds netreduce's cost against the ring's per
byte on the wire (a netreduce rank sends and receives the tensor once, a ring rank
2(P-1)/P times), then the floors: a netreduce rank's CPU if it paid per wire byte what a
ring rank pays for everything but its sums, and the busbw against the ring that the host's
cores allow when every process is CPU-bound (P ring ranks against P netreduce ranks plus
the switch).

  bench/profile.py                                  # P = 4, 64 MiB, soft, ring against netreduce
  bench/profile.py --ranks 2 --transport tcp --algorithms ring --bytes 64M
  bench/profile.py --switch                         # the switch's components too

The profiler is async-profiler's Java agent, taken from its Maven artifact
(tools.profiler:async-profiler) into bench/target/, or --agent PATH.
"""
import argparse
import collections
import glob
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "bench", "target")
PROFILER = "tools.profiler:async-profiler:4.1"

# (component, pattern, where): "any" searches every frame, "leaf" the sampled frame only; first match wins.
COMPONENTS = [
    ("sums", r"ReductionKernel|NativeUdp\.add|add_floats|LaneStore\$\w+\.add\b", "any"),
    ("ICRC", r"crc32|Crc32|Icrc", "any"),
    ("kernel copy out", r"^(_copy_from_iter|_copy_from_user|copy_user_\w+|rep_movs_alternative)_\[k\]$", "leaf"),
    ("kernel copy in", r"^(_copy_to_iter|_copy_to_user)_\[k\]$", "leaf"),
    ("copy into place", r"arraycopy|copyMemory|memcpy|memmove", "leaf"),
    ("context switches", r"^(finish_task_switch\S*|__schedule)_\[k\]$", "leaf"),
    ("kernel, other", r"_\[k\]$", "leaf"),
    ("user, other", r"", "leaf"),
]
ALGORITHM_FRAME = re.compile(r"io/netreduce/collectives/algorithm/(\w+)/\w+Algorithm\.allReduce")
BENCH_WORK = re.compile(r"io/netreduce/cli/allreduce/Reference\.")
SWITCH_FRAME = re.compile(r"io/netreduce/netswitch/dataplane/")


def agent(path):
    """The profiler's native agent: --agent, or extracted from its Maven artifact."""
    if path:
        return path
    arch = {"x86_64": "linux-x64", "aarch64": "linux-arm64"}.get(platform.machine())
    if arch is None:
        sys.exit(f"profile.py: no async-profiler build for {platform.machine()}; pass --agent")
    lib = os.path.join(OUT, "async-profiler", arch, "libasyncProfiler.so")
    if os.path.exists(lib):
        return lib
    group, artifact, version = PROFILER.split(":")
    jar = os.path.expanduser(f"~/.m2/repository/{group.replace('.', '/')}/{artifact}/{version}/{artifact}-{version}.jar")
    if not os.path.exists(jar):
        subprocess.run(["mvn", "-q", "dependency:get", f"-Dartifact={PROFILER}"], check=True)
    with zipfile.ZipFile(jar) as z:
        z.extract(f"{arch}/libasyncProfiler.so", os.path.join(OUT, "async-profiler"))
    return lib


def component(frames):
    for name, pattern, where in COMPONENTS:
        if where == "any":
            if any(re.search(pattern, f) for f in frames):
                return name
        elif re.search(pattern, frames[-1]):
            return name
    return "user, other"


def rank_samples(files):
    """{algorithm: Counter(component -> samples)} over the timed calls of every rank."""
    got = collections.defaultdict(collections.Counter)
    for fn in files:
        with open(fn) as f:
            for line in f:
                stack, _, n = line.rstrip().rpartition(" ")
                if "WorkerLoop.timedBlock" not in stack or BENCH_WORK.search(stack):
                    continue
                m = ALGORITHM_FRAME.search(stack)
                if m is None:
                    continue  # the timed block's barrier and bookkeeping, outside any all-reduce
                got[m.group(1)][component(stack.split(";"))] += int(n)
    return got


def switch_samples(files):
    got = collections.Counter()
    for fn in files:
        with open(fn) as f:
            for line in f:
                stack, _, n = line.rstrip().rpartition(" ")
                if SWITCH_FRAME.search(stack):
                    got[component(stack.split(";"))] += int(n)
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--transport", default="soft")
    ap.add_argument("--algorithms", default="ring,netreduce")
    ap.add_argument("--bytes", default="64M")
    ap.add_argument("--iters", type=int, default=40, help="timed calls per algorithm and placement")
    ap.add_argument("--switch", action="store_true", help="profile the software switch's data plane too")
    ap.add_argument("--agent", help="libasyncProfiler.so to use")
    ap.add_argument("--keep", metavar="DIR", help="keep the collapsed stacks (rank-PID.txt, switch-PID.txt) in DIR")
    a = ap.parse_args()
    lib = agent(a.agent)
    with tempfile.TemporaryDirectory(prefix="netreduce-profile-") as scratch:
        tmp = a.keep or scratch
        os.makedirs(tmp, exist_ok=True)
        opts = f"-agentpath:{lib}=start,event=cpu,interval=1ms,collapsed,file={tmp}/%s-%%p.txt"
        env = dict(os.environ, NETREDUCE_CHILD_JAVA_OPTS=(os.environ.get("NETREDUCE_CHILD_JAVA_OPTS", "") + " "
                                                          + opts % "rank").strip())
        if a.switch:
            env["JAVA_OPTS"] = (env.get("JAVA_OPTS", "") + " " + opts % "switch").strip()
        out = subprocess.run([os.path.join(ROOT, "bin", "netreduce"), "bench", "--local", str(a.ranks),
                              "--algorithm", a.algorithms, "--transport", a.transport, "-b", a.bytes, "-e", a.bytes,
                              "-n", str(a.iters), "-w", "3", "-T", "0", "-W", "5", "--json"],
                             check=True, capture_output=True, text=True, env=env, timeout=1800)
        # The agent says "Profiling started" on the switch process's standard output, before the JSON.
        doc = json.loads(out.stdout[out.stdout.index("{"):])
        ranks = rank_samples(glob.glob(f"{tmp}/rank-*.txt"))
        switch = switch_samples(glob.glob(f"{tmp}/switch-*.txt")) if a.switch else None
    p = a.ranks
    calls = 2 * a.iters  # both placements
    figures = {row["in_place"]["algorithm"]: row["in_place"] for row in doc["rows"]}
    algorithms = [x for x in a.algorithms.split(",") if x in ranks]
    both = "ring" in algorithms and "netreduce" in algorithms
    wire = p / (2 * (p - 1))  # a netreduce rank's wire bytes per a ring rank's
    print(f"P = {p}, {a.bytes}, {a.transport}, {a.iters} timed calls per placement; CPU ms per call, all ranks")
    print("| component | " + " | ".join(algorithms) + " |" + (" netreduce × ring per wire byte |" if both else ""))
    print("|---|" + "---:|" * (len(algorithms) + both))
    for name in [c[0] for c in COMPONENTS] + ["all"]:
        cells = [sum(ranks[x].values()) if name == "all" else ranks[x][name] for x in algorithms]
        line = f"| {name} | " + " | ".join(f"{c / calls:.1f}" for c in cells) + " |"
        if both:
            r, n = cells[algorithms.index("ring")], cells[algorithms.index("netreduce")]
            line += f" {n / r / wire:.2f} |" if r else " – |"
        print(line)
    if switch:
        total = sum(switch.values())
        print("\nswitch data plane (whole run): " + ", ".join(f"{k} {100 * v / total:.0f} %"
                                                             for k, v in switch.most_common()))
    if not both:
        return
    ring_all = sum(ranks["ring"].values())
    transport = 1 - ranks["ring"]["sums"] / ring_all  # a ring rank's CPU outside its sums
    floor = transport * wire
    r_cpu, n_cpu = figures["ring"]["cpu_s_per_gb"], figures["netreduce"]["cpu_s_per_gb"]
    print(f"\nnetreduce rank CPU × the ring's: profile {sum(ranks['netreduce'].values()) / ring_all:.2f}, "
          f"bench CPU column {n_cpu / r_cpu:.2f}; floor {floor:.2f} = the ring rank's CPU outside its sums "
          f"({100 * transport:.0f} %) × a netreduce rank's wire bytes ({wire:.3f} of a ring rank's)")
    w_cpu = figures["netreduce"].get("switch_cpu_s_per_gb")
    if not w_cpu:
        return
    # The switch moves P tensors in and P out, a ring rank 2(P-1)/P each way.
    w_fair = p * p / (2 * (p - 1)) * transport
    measured = figures["netreduce"]["busbw_gbps"] / figures["ring"]["busbw_gbps"]
    print(f"switch {w_cpu:.2f} s/GB = {w_cpu / r_cpu:.2f} ring ranks ({w_fair:.2f} at a ring rank's CPU per wire byte)")
    # Every process CPU-bound on the same cores: the busbw ratio is all the ring's CPU over all netreduce's.
    print(f"busbw × the ring's when every process is CPU-bound: {p * r_cpu / (p * n_cpu + w_cpu):.2f} with these "
          f"ranks and switch, {p / (p * floor + w_cpu / r_cpu):.2f} with ranks at the floor, "
          f"{p / (p * floor + w_fair):.2f} with ranks at the floor and the switch at a ring rank's cost per wire "
          f"byte; measured {measured:.2f}")

if __name__ == "__main__":
    main()
