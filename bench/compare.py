#!/usr/bin/env python3
"""Same-run comparison of all-reduce on this machine, in interleaved rounds.

Each round runs, for each P: Open MPI (MPI_Allreduce over its TCP transport) and Gloo
(AllreduceRing over its TCP transport) at every size, and `netreduce bench --local P` for
every netreduce configuration (algorithm/transport) over the same sizes, one after the
other, so that a slow spell of a shared machine hits all of them alike. All on loopback,
float32 sum, in place (netreduce also out of place), every result checked exact. The
table gives, per size and implementation, the median and the range over rounds of the
mean time per call, of busbw (nccl-tests: algbw x 2(P-1)/P, GB/s) and of CPU per GB of
tensor per rank (each rank process's CPU time over the timed loop; for netreduce the
switch's own CPU is not included), and each netreduce configuration's busbw, time and
CPU against the peers measured in the same round.

At P = 2 each round also runs bench/tcp_exchange.c twice, rows of their own (not peers): once
with both sides sending and receiving the bytes of a P = 2 all-reduce at once over loopback
TCP, in C and without reducing, the kernel's floor for any all-reduce over TCP at P = 2;
once as a P = 2 all-reduce in C (its "reduce" mode: the pipelined reduce-scatter and
all-gather of netreduce's ring, 1 MiB pieces summed as they land, without framing, ACKs or
a JVM), what an exact all-reduce over the same connections costs at the least; their time
is the mean per round, as every other row's is the mean per call. Both give
each direction a connection of its own (its "two" mode), as netreduce's ring at P = 2 has:
at 2-16 MiB that ran 0.79-0.98x the time of one connection both ways, at 64 MiB level
(docs/benchmarks.md). Both sleep in poll() when they wait, so they are floors for large
sizes only (small ones pay a wake-up per step). Their CPU is each process's over the timed
rounds. Their connections get the congestion control netreduce's tcp provider gives its
own (cubic where the system's default is bbr); Open MPI and Gloo keep the system's, which
they have no setting for (the table's header says when the two differ).

Timed calls per size: at least --iters, and for the peers as many as 256 MiB of tensor
(a 4 KiB call 20000 times), a quarter of that warming up first; netreduce bench times
each size for at least --seconds-per-size (its -T, a quarter of that warming up), 1 s by
default, so that small sizes time about as many calls as the peers (bench's own default,
0.25 s, timed 4x fewer, colder calls than Open MPI at 64 KiB and P = 4). Before its first
size netreduce bench warms up over every size for --warmup-seconds (its -W, 10 s by
default, which bench scales by local ranks per core): with bench's own 3 s, the JIT was still compiling during a sweep's first sizes,
and 64 KiB at P = 2 read 70-250 us from run to run with the CPU per GB rising alongside,
against 49-61 us after 10 s.

The peers run each size in a process of its own, netreduce bench all of a sweep's sizes in
one (after a warm-up over all of them); --fresh-per-size runs a netreduce bench per size
too, as the peers run, at the cost of a warm-up per size.

Before each program the harness waits --settle seconds (3 by default): for a moment after a
process frees much memory, copies into socket buffers run slow on a VM that gives free pages
back to its host (docs/benchmarks.md, "Why runs vary": the C floor's 64 MiB exchange 36-41 ms
right after another process touched and freed 4 GiB, 14-15 ms three seconds later).

  bench/compare.py                                    5 rounds, 64 MiB, P = 2 and 4
  bench/compare.py --bytes 4K,8K,16K,32K,64K --ranks 2 --configs ring/tcp,netreduce/soft
  bench/compare.py --rounds 3 --bytes 16M --ranks 4 --configs ring/tcp
  bench/compare.py --configs ring/tcp,ring/soft,netreduce/soft --json rounds.json
  bench/compare.py --table rounds.json                 the table again, from the kept rounds
  bench/compare.py --one-host --configs ring/tcp       every rank on one host: Open MPI over shared
                                                       memory (btl vader,self) against netreduce --hosts 1

Needs: openmpi-bin libopenmpi-dev libgloo-dev g++ (Debian packages) and python3.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "target")
# Open MPI skips 127.0.0.0/8 unless told, and stays off shared memory only when told.
MPI_FLAGS = ["--oversubscribe", "--mca", "pml", "ob1", "--mca", "btl", "tcp,self",
             "--mca", "btl_tcp_if_include", "lo", "--mca", "oob_tcp_if_include", "lo"]
UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
PEERS = ("Open MPI", "Gloo")
# --one-host: the ranks share one host, so Open MPI runs over shared memory and netreduce
# with --hosts 1 (its shared-memory transport); Gloo has no shared-memory transport.
SHM_MPI_FLAGS = ["--oversubscribe", "--mca", "pml", "ob1", "--mca", "btl", "vader,self"]
FLOOR = "kernel floor: C exchange, no reduction"
C_RING = "C all-reduce: the ring at P = 2 in C"
# bench/tcp_exchange.c's piece for its all-reduce: netreduce's ring message size over tcp
# (CommunicatorConfig.STREAM_RING_MESSAGE_BYTES).
C_RING_PIECE = 1 << 20


def size_bytes(text):
    return int(text[:-1]) * UNITS[text[-1]] if text[-1] in UNITS else int(text)


def size_name(n):
    for unit, v in (("M", 1 << 20), ("K", 1 << 10)):
        if n % v == 0:
            return f"{n // v} {unit}iB"
    return f"{n} B"


def build():
    for tool in ("mpicc", "mpirun", "g++"):
        if shutil.which(tool) is None:
            sys.exit(f"compare.py: {tool} not found (apt-get install -y openmpi-bin libopenmpi-dev libgloo-dev g++)")
    os.makedirs(OUT, exist_ok=True)
    subprocess.run(["mpicc", "-O2", "-o", f"{OUT}/mpi_allreduce", f"{HERE}/mpi_allreduce.c"], check=True)
    subprocess.run(["g++", "-O2", "-std=c++17", "-o", f"{OUT}/gloo_allreduce", f"{HERE}/gloo_allreduce.cc",
                    "-lgloo", "-lpthread"], check=True)
    subprocess.run(["cc", "-O3", "-march=native", "-o", f"{OUT}/tcp_exchange", f"{HERE}/tcp_exchange.c"], check=True)


def busbw(nbytes, time_us, p):
    return nbytes / (time_us * 1e3) * 2 * (p - 1) / p


def peer_counts(nbytes, iters):
    timed = max(iters, min(20000, (256 << 20) // nbytes))
    return timed, max(1, timed // 4)


def open_mpi(p, nbytes, iters, warmup, flags=MPI_FLAGS):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               GLIBC_TUNABLES="glibc.malloc.mmap_max=0")  # per-call buffers page-fault without it
    out = subprocess.run(["mpirun", *flags, "-np", str(p), f"{OUT}/mpi_allreduce", str(nbytes), str(iters),
                          str(warmup)], check=True, capture_output=True, text=True, env=env, timeout=900)
    _, _, t, _, bw, wrong, cpu = out.stdout.split()
    return {"time_us": float(t), "busbw": float(bw), "wrong": int(wrong), "cpu_s_per_gb": float(cpu) / (nbytes / 1e9)}


def gloo(p, nbytes, iters, warmup, attempts=3):
    # Gloo's TCP pairs time out on connect when P ranks oversubscribe two cores (an
    # IoException from one rank); such a run measured nothing, so it is run again.
    for attempt in range(1, attempts + 1):
        store = tempfile.mkdtemp()
        try:
            procs = [subprocess.Popen([f"{OUT}/gloo_allreduce", str(r), str(p), store, str(nbytes), str(iters),
                                       str(warmup)], stdout=subprocess.PIPE, text=True) for r in range(p)]
            lines = [pr.communicate(timeout=900)[0].split() for pr in procs]
        finally:
            shutil.rmtree(store, ignore_errors=True)
        if all(pr.returncode == 0 for pr in procs) and all(len(f) == 6 for f in lines):
            break
        print(f"Gloo P={p} {size_name(nbytes)}: a rank failed (attempt {attempt} of {attempts})", file=sys.stderr)
    else:
        sys.exit(f"compare.py: Gloo failed {attempts} times at P={p}, {size_name(nbytes)}")
    t = statistics.mean(float(f[3]) for f in lines)
    cpu = statistics.mean(float(f[5]) for f in lines)
    return {"time_us": t, "busbw": busbw(nbytes, t, p), "wrong": sum(int(f[4]) for f in lines),
            "cpu_s_per_gb": cpu / (nbytes / 1e9)}


def floor_congestion():
    """The congestion control netreduce's tcp provider gives its connections by default
    (cubic where the system's default is bbr), for the floor's connection; None: the system's."""
    try:
        with open("/proc/sys/net/ipv4/tcp_congestion_control") as f:
            return "cubic" if f.read().strip() == "bbr" else None
    except OSError:
        return None


def tcp_floor(nbytes, rounds, reduce=False):
    """bench/tcp_exchange.c over a loopback TCP connection each way, as netreduce's ring has
    at P = 2, with the congestion control netreduce's would have: the bytes of a P = 2
    all-reduce both ways, in C, without reducing (the kernel's floor for any P = 2
    all-reduce over TCP), or with reduce=True a P = 2 all-reduce in C, checked exact by the
    program itself."""
    cc = floor_congestion() or "system"
    piece = C_RING_PIECE if reduce else 1 << 20
    out = subprocess.run([f"{OUT}/tcp_exchange", str(nbytes), str(min(nbytes, piece)), str(rounds), cc]
                         + (["reduce"] if reduce else []) + ["two"], check=True, capture_output=True, text=True, timeout=900)
    # Its mean time per round, as Open MPI's, Gloo's and netreduce's figures are means (its
    # median would leave out the slow rounds the others pay for).
    fields = out.stdout.split()
    cpu, mean_ms = fields[6], fields[7]
    t = float(mean_ms) * 1e3
    return {"time_us": t, "busbw": busbw(nbytes, t, 2), "wrong": 0, "cpu_s_per_gb": float(cpu) / (nbytes / 1e9)}


def netreduce(p, sizes, iters, warmup, seconds, warmup_seconds, algorithm, transport, extra=()):
    """One `netreduce bench` over all sizes (they double): {size: {placement: figures}}."""
    out = subprocess.run([os.path.join(ROOT, "bin", "netreduce"), "bench", "--local", str(p), "--algorithm", algorithm,
                          "--transport", transport, "-b", str(min(sizes)), "-e", str(max(sizes)), "-f", "2",
                          "-n", str(iters), "-w", str(warmup), "-T", str(seconds), "-W", str(warmup_seconds), *extra,
                          "--json"],
                         check=True, capture_output=True, text=True, timeout=1800)
    got = {}
    for row in json.loads(out.stdout)["rows"]:
        if row["size"] in sizes:
            got[row["size"]] = {placement: {"time_us": row[placement]["time_us"], "busbw": row[placement]["busbw_gbps"],
                                            "wrong": row[placement]["wrong"],
                                            "cpu_s_per_gb": row[placement]["cpu_s_per_gb"]}
                                for placement in ("in_place", "out_of_place")}
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--bytes", default="64M", help="one size, or a doubling list such as 4K,8K,16K")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--configs", default="ring/tcp,ring/soft,netreduce/soft")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--seconds-per-size", type=float, default=1.0,
                    help="netreduce bench -T: least seconds timed per size (default 1)")
    ap.add_argument("--warmup-seconds", type=float, default=10.0,
                    help="netreduce bench -W: least seconds of warm-up over every size first (default 10)")
    ap.add_argument("--fresh-per-size", action="store_true",
                    help="one netreduce bench per size, as the peers run, instead of one over the sweep")
    ap.add_argument("--settle", type=float, default=3.0,
                    help="seconds to wait before each program, for the memory the last one freed to settle")
    ap.add_argument("--json", help="also write every round's figures here")
    ap.add_argument("--table", metavar="JSON", help="only print the table of rounds an earlier --json kept")
    ap.add_argument("--one-host", action="store_true",
                    help="Open MPI over shared memory against netreduce --hosts 1 (no Gloo, no kernel floor)")
    a = ap.parse_args()
    peers = ("Open MPI",) if a.one_host else PEERS
    if a.table:
        with open(a.table) as f:
            saved = json.load(f)
        table(saved["rounds"], saved["header"])
        return
    sizes = [size_bytes(s) for s in a.bytes.split(",") if s]
    if any(y != 2 * x for x, y in zip(sizes, sizes[1:])):
        sys.exit("compare.py: --bytes must be one size or a doubling list (netreduce bench runs them with -f 2)")
    configs = [c for c in a.configs.split(",") if c]
    ranks = [int(r) for r in a.ranks.split(",")]
    build()
    rounds = []
    for rnd in range(a.rounds):
        for p in ranks:
            got = {s: {} for s in sizes}
            for s in sizes:
                timed, warm = peer_counts(s, a.iters)
                time.sleep(a.settle)
                got[s]["Open MPI"] = open_mpi(p, s, timed, warm, SHM_MPI_FLAGS if a.one_host else MPI_FLAGS)
                if a.one_host:
                    continue
                time.sleep(a.settle)
                got[s]["Gloo"] = gloo(p, s, timed, warm)
                if p == 2:
                    time.sleep(a.settle)
                    got[s][FLOOR] = tcp_floor(s, timed)
                    time.sleep(a.settle)
                    got[s][C_RING] = tcp_floor(s, timed, reduce=True)
            for c in configs:
                algorithm, transport = c.split("/")
                extra = ("--hosts", "1") if a.one_host else ()
                for run_sizes in ([[s] for s in sizes] if a.fresh_per_size else [sizes]):
                    time.sleep(a.settle)
                    for s, placements in netreduce(p, run_sizes, a.iters, a.warmup, a.seconds_per_size,
                                                      a.warmup_seconds, algorithm, transport, extra).items():
                        for placement, r in placements.items():
                            got[s][f"netreduce {c}, {placement.replace('_', ' ')}"] = r
            for s in sizes:
                for name, r in got[s].items():
                    if r["wrong"] != 0:
                        sys.exit(f"round {rnd + 1}, P={p}, {s} B, {name}: {r['wrong']} wrong elements")
                rounds.append({"round": rnd + 1, "p": p, "bytes": s, "results": got[s],
                               "best_peer_busbw": max(got[s][n]["busbw"] for n in peers),
                               "best_peer_cpu_s_per_gb": min(got[s][n]["cpu_s_per_gb"] for n in peers)})
                print(f"round {rnd + 1}/{a.rounds} P={p} {size_name(s)}: "
                      + ", ".join(f"{k} {v['time_us']:.1f} us" for k, v in got[s].items()), file=sys.stderr, flush=True)
    header = (("one host: Open MPI over shared memory (btl vader,self), netreduce --hosts 1; " if a.one_host else "")
              + f"{a.rounds} interleaved rounds, float32 sum in place unless said, every result checked exact; "
              f"netreduce bench -n {a.iters} -w {a.warmup} -T {a.seconds_per_size:g} -W {a.warmup_seconds:g}"
              + (", one per size" if a.fresh_per_size else "") + "; "
              + (f"TCP congestion control: the peers the system's, netreduce and the floor {floor_congestion()}; "
                 if floor_congestion() else "")
              + "median (range)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"header": header, "rounds": rounds}, f, indent=1)
    table(rounds, header)


def table(rounds, header):
    def spread(values, fmt="%.3f"):
        return f"{fmt % statistics.median(values)} ({fmt % min(values)}–{fmt % max(values)})"

    print(header)
    print()
    print("| P | size | implementation | time µs | × Open MPI's time | × Gloo's time | busbw GB/s | × better peer "
          "| CPU s/GB per rank | × the peers' lower |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for p in sorted({r["p"] for r in rounds}):
        for s in sorted({r.get("bytes", 0) for r in rounds if r["p"] == p}):
            mine = [r for r in rounds if r["p"] == p and r.get("bytes", 0) == s]
            for name in mine[0]["results"]:
                res = [r["results"][name] for r in mine]
                peer = name in PEERS
                ratio = "" if peer else spread([x["busbw"] / r["best_peer_busbw"] for x, r in zip(res, mine)], "%.2f")
                cpu_ratio = "" if peer else spread([x["cpu_s_per_gb"] / r["best_peer_cpu_s_per_gb"]
                                                    for x, r in zip(res, mine)], "%.2f")
                vs = {n: "" if peer or n not in mine[0]["results"] else
                      spread([x["time_us"] / r["results"][n]["time_us"] for x, r in zip(res, mine)], "%.2f")
                      for n in PEERS}
                print(f"| {p} | {size_name(s) if s else ''} | {name} | {spread([x['time_us'] for x in res], '%.1f')} "
                      f"| {vs['Open MPI']} | {vs['Gloo']} | {spread([x['busbw'] for x in res])} | {ratio} "
                      f"| {spread([x['cpu_s_per_gb'] for x in res])} | {cpu_ratio} |")


if __name__ == "__main__":
    main()
