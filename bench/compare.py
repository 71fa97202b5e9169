#!/usr/bin/env python3
"""Same-run comparison of all-reduce on this machine, in interleaved rounds.

Each round runs, for each P: Open MPI (MPI_Allreduce over its TCP transport), Gloo
(AllreduceRing over its TCP transport), and `netreduce bench --local P` for every
netreduce configuration (algorithm/transport), one after the other, so that a slow spell
of a shared machine hits all of them alike. All on loopback, float32 sum, in place, one
size, every result checked exact. The table gives, per implementation, the median and the
range over rounds of busbw (nccl-tests: algbw x 2(P-1)/P, GB/s) and of CPU per GB of
tensor per rank (each rank process's CPU time over the timed loop; for netreduce the
switch's own CPU is not included), and each netreduce configuration's busbw and CPU
against the better of Open MPI and Gloo in the same round.

  bench/compare.py                                    5 rounds, 64 MiB, P = 2 and 4
  bench/compare.py --rounds 3 --bytes 16M --ranks 4 --configs ring/tcp
  bench/compare.py --configs ring/tcp,ring/soft,netreduce/soft --json rounds.json
  bench/compare.py --table rounds.json                 the table again, from the kept rounds

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

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "target")
# Open MPI skips 127.0.0.0/8 unless told, and stays off shared memory only when told.
MPI_FLAGS = ["--oversubscribe", "--mca", "pml", "ob1", "--mca", "btl", "tcp,self",
             "--mca", "btl_tcp_if_include", "lo", "--mca", "oob_tcp_if_include", "lo"]
UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def size_bytes(text):
    return int(text[:-1]) * UNITS[text[-1]] if text[-1] in UNITS else int(text)


def build():
    for tool in ("mpicc", "mpirun", "g++"):
        if shutil.which(tool) is None:
            sys.exit(f"compare.py: {tool} not found (apt-get install -y openmpi-bin libopenmpi-dev libgloo-dev g++)")
    os.makedirs(OUT, exist_ok=True)
    subprocess.run(["mpicc", "-O2", "-o", f"{OUT}/mpi_allreduce", f"{HERE}/mpi_allreduce.c"], check=True)
    subprocess.run(["g++", "-O2", "-std=c++17", "-o", f"{OUT}/gloo_allreduce", f"{HERE}/gloo_allreduce.cc",
                    "-lgloo", "-lpthread"], check=True)


def busbw(nbytes, time_us, p):
    return nbytes / (time_us * 1e3) * 2 * (p - 1) / p


def open_mpi(p, nbytes, iters, warmup):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               GLIBC_TUNABLES="glibc.malloc.mmap_max=0")  # per-call buffers page-fault without it
    out = subprocess.run(["mpirun", *MPI_FLAGS, "-np", str(p), f"{OUT}/mpi_allreduce", str(nbytes), str(iters),
                          str(warmup)], check=True, capture_output=True, text=True, env=env, timeout=900)
    _, _, t, _, bw, wrong, cpu = out.stdout.split()
    return {"time_us": float(t), "busbw": float(bw), "wrong": int(wrong), "cpu_s_per_gb": float(cpu) / (nbytes / 1e9)}


def gloo(p, nbytes, iters, warmup):
    store = tempfile.mkdtemp()
    try:
        procs = [subprocess.Popen([f"{OUT}/gloo_allreduce", str(r), str(p), store, str(nbytes), str(iters),
                                   str(warmup)], stdout=subprocess.PIPE, text=True) for r in range(p)]
        lines = [pr.communicate(timeout=900)[0].split() for pr in procs]
    finally:
        shutil.rmtree(store, ignore_errors=True)
    t = statistics.mean(float(f[3]) for f in lines)
    cpu = statistics.mean(float(f[5]) for f in lines)
    return {"time_us": t, "busbw": busbw(nbytes, t, p), "wrong": sum(int(f[4]) for f in lines),
            "cpu_s_per_gb": cpu / (nbytes / 1e9)}


def netreduce(p, nbytes, iters, warmup, algorithm, transport):
    out = subprocess.run([os.path.join(ROOT, "bin", "netreduce"), "bench", "--local", str(p), "--algorithm", algorithm,
                          "--transport", transport, "-b", str(nbytes), "-e", str(nbytes), "-n", str(iters),
                          "-w", str(warmup), "--json"], check=True, capture_output=True, text=True, timeout=900)
    row = json.loads(out.stdout)["rows"][0]
    return {placement: {"time_us": row[placement]["time_us"], "busbw": row[placement]["busbw_gbps"],
                        "wrong": row[placement]["wrong"], "cpu_s_per_gb": row[placement]["cpu_s_per_gb"]}
            for placement in ("in_place", "out_of_place")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--bytes", default="64M")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--configs", default="ring/tcp,ring/soft,netreduce/soft")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--json", help="also write every round's figures here")
    ap.add_argument("--table", metavar="JSON", help="only print the table of rounds an earlier --json kept")
    a = ap.parse_args()
    if a.table:
        with open(a.table) as f:
            saved = json.load(f)
        table(saved["rounds"], saved["header"])
        return
    nbytes = size_bytes(a.bytes)
    configs = [c for c in a.configs.split(",") if c]
    ranks = [int(r) for r in a.ranks.split(",")]
    build()
    rounds = []
    for rnd in range(a.rounds):
        for p in ranks:
            got = {"Open MPI": open_mpi(p, nbytes, a.iters, a.warmup), "Gloo": gloo(p, nbytes, a.iters, a.warmup)}
            for c in configs:
                algorithm, transport = c.split("/")
                for placement, r in netreduce(p, nbytes, a.iters, a.warmup, algorithm, transport).items():
                    got[f"netreduce {c}, {placement.replace('_', ' ')}"] = r
            for name, r in got.items():
                if r["wrong"] != 0:
                    sys.exit(f"round {rnd + 1}, P={p}, {name}: {r['wrong']} wrong elements")
            best = max(got["Open MPI"]["busbw"], got["Gloo"]["busbw"])
            best_cpu = min(got["Open MPI"]["cpu_s_per_gb"], got["Gloo"]["cpu_s_per_gb"])
            rounds.append({"round": rnd + 1, "p": p, "results": got, "best_peer_busbw": best,
                           "best_peer_cpu_s_per_gb": best_cpu})
            print(f"round {rnd + 1}/{a.rounds} P={p}: " + ", ".join(f"{k} {v['busbw']:.3f}" for k, v in got.items()),
                  file=sys.stderr, flush=True)
    header = (f"{a.rounds} interleaved rounds, {a.bytes}B float32 sum in place unless said, {a.iters} timed calls "
              f"after {a.warmup} warm-up, every result checked exact; median (range)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"header": header, "rounds": rounds}, f, indent=1)
    table(rounds, header)


def table(rounds, header):
    def spread(values, fmt="%.3f"):
        return f"{fmt % statistics.median(values)} ({fmt % min(values)}–{fmt % max(values)})"

    print(header)
    print()
    print("| P | implementation | time µs | busbw GB/s | × better peer | CPU s/GB per rank | × the peers' lower |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for p in sorted({r["p"] for r in rounds}):
        mine = [r for r in rounds if r["p"] == p]
        for name in mine[0]["results"]:
            t = [r["results"][name]["time_us"] for r in mine]
            bw = [r["results"][name]["busbw"] for r in mine]
            cpu = [r["results"][name]["cpu_s_per_gb"] for r in mine]
            peer = name in ("Open MPI", "Gloo")
            ratio = "" if peer else spread([r["results"][name]["busbw"] / r["best_peer_busbw"] for r in mine], "%.2f")
            cpu_ratio = "" if peer else spread([r["results"][name]["cpu_s_per_gb"] / r["best_peer_cpu_s_per_gb"]
                                                for r in mine], "%.2f")
            print(f"| {p} | {name} | {spread(t, '%.1f')} | {spread(bw)} | {ratio} | {spread(cpu)} | {cpu_ratio} |")


if __name__ == "__main__":
    main()
