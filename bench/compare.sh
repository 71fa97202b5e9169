#!/usr/bin/env bash
# Same-run comparison of all-reduce on this machine: netreduce (both algorithms, through
# `netreduce bench --local P`) beside Open MPI (MPI_Allreduce over its TCP transport) and
# Gloo (AllreduceRing over its TCP transport), all on loopback, float sum, one size.
# Prints a markdown table of time and busbw (nccl-tests' formula, algbw x 2(P-1)/P).
#
#   bench/compare.sh                     P = 2 and 4, 64 MiB, 10 iterations, 2 warm-up
#   RANKS="2" BYTES=$((16<<20)) ITERS=5 bench/compare.sh
#   SKIP_NETREDUCE=1 bench/compare.sh    baselines only
#
# Needs: openmpi-bin libopenmpi-dev libgloo-dev g++ (Debian packages).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="$here/target"
RANKS="${RANKS:-2 4}"
BYTES="${BYTES:-$((64 << 20))}"
ITERS="${ITERS:-10}"
WARMUP="${WARMUP:-2}"
mkdir -p "$out"

for tool in mpicc mpirun g++; do
  command -v "$tool" >/dev/null || { echo "compare.sh: $tool not found (apt-get install -y openmpi-bin libopenmpi-dev libgloo-dev g++)" >&2; exit 1; }
done
mpicc -O2 -o "$out/mpi_allreduce" "$here/mpi_allreduce.c"
g++ -O2 -std=c++17 -o "$out/gloo_allreduce" "$here/gloo_allreduce.cc" -lgloo -lpthread

# Open MPI skips 127.0.0.0/8 unless told; per-call buffers page-fault without the tunable.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi_flags=(--oversubscribe --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)

busbw() { awk -v b="$1" -v t="$2" -v p="$3" 'BEGIN { printf "%.3f", b / (t * 1e3) * 2 * (p - 1) / p }'; }

echo "| P | implementation | size | time (us) | busbw (GB/s) | #wrong |"
echo "|---|---|---|---|---|---|"
for p in $RANKS; do
  # Open MPI: rank 0 prints "ranks bytes time_us algbw busbw wrong".
  read -r _ _ t _ bw wrong < <(GLIBC_TUNABLES=glibc.malloc.mmap_max=0 \
      timeout 600 mpirun "${mpi_flags[@]}" -np "$p" "$out/mpi_allreduce" "$BYTES" "$ITERS" "$WARMUP")
  echo "| $p | Open MPI $(mpirun --version | head -n 1 | awk '{print $NF}') TCP | $BYTES | $t | $bw | $wrong |"

  # Gloo: one process per rank, rendezvous through a FileStore directory.
  store="$(mktemp -d)"
  lines="$(for ((r = 0; r < p; r++)); do timeout 600 "$out/gloo_allreduce" "$r" "$p" "$store" "$BYTES" "$ITERS" "$WARMUP" & done; wait)"
  rm -rf "$store"
  t="$(awk '{ s += $4; n++ } END { printf "%.1f", s / n }' <<<"$lines")"
  wrong="$(awk '{ s += $5 } END { print s }' <<<"$lines")"
  echo "| $p | Gloo AllreduceRing TCP | $BYTES | $t | $(busbw "$BYTES" "$t" "$p") | $wrong |"

  if [[ -z "${SKIP_NETREDUCE:-}" ]]; then
    for algo in netreduce ring; do
      errlog="$out/netreduce-$algo-$p.err"
      if json="$("$root/bin/netreduce" bench --local "$p" --algorithm "$algo" -b "$BYTES" -e "$BYTES" \
                  -n "$ITERS" -w "$WARMUP" --json 2>"$errlog")"; then
        row="$(python3 -c 'import json,sys; r=json.load(sys.stdin)["rows"][0]["in_place"]; print("%.1f %.3f %d" % (r["time_us"], r["busbw_gbps"], r["wrong"]))' <<<"$json")"
        read -r t bw wrong <<<"$row"
        echo "| $p | netreduce $algo (soft, in place) | $BYTES | $t | $bw | $wrong |"
      else
        echo "| $p | netreduce $algo (soft) | $BYTES | failed: $(grep '^netreduce bench:' "$errlog" | cut -c1-160) | | |"
      fi
    done
  fi
done
