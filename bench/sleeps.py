#!/usr/bin/env python3
"""How much of the time the busiest threads of a command run, sleep, or wait for a core.

Starts COMMAND, and after --delay seconds records the scheduler's context switches on every
CPU for --seconds (`perf record -e sched:sched_switch -a`, a software event, so it works in a
VM without hardware counters), then waits for COMMAND to finish. For each of the --threads
threads that ran longest in the window (or those whose name matches --comm) it prints:

  run %          the window's share the thread was on a CPU (from a switch in to a switch
                 out, both inside the window: a thread that never switches there shows none)
  sleeps /s      how often it went to sleep (blocked: select, poll, a read, a futex)
  asleep %       the window's share it spent asleep, and the median and 90th percentile of one sleep
  preempted %    the share it spent runnable but without a CPU

and the share of each CPU left idle. A rank of an all-reduce that sleeps while its peer
still has bytes for it has nothing to do at that moment; two ranks on two cores that are
each busy all the time sleep seldom. So the same figures for `netreduce bench` and for the C
all-reduce of the same size (`tcp_exchange ... reduce`) show how much of a call's time the
ranks spend waiting on each other, apart from what each byte costs.

  bench/sleeps.py --delay 20 --seconds 3 -- bin/netreduce bench --local 2 --algorithm ring \\
      --transport tcp -b 64M -e 64M -T 15 -W 10 -c 0
  bench/sleeps.py --delay 1 --seconds 2 -- bench/target/tcp_exchange 67108864 1048576 300 cubic reduce

Needs perf (Debian's linux-perf) and root, or a perf_event_paranoid that allows
system-wide tracepoints. Choose --delay so that the window falls in the timed calls.
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SWITCH = re.compile(r"\s*\S.*?\s+\d+\s+\[(\d+)\]\s+([\d.]+): sched:sched_switch: prev_comm=(.*?) prev_pid=(\d+) "
                    r".*?prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)")


def percentile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))] if sorted_values else 0.0


def analyse(lines):
    """Per thread (tid): name, seconds on a CPU, sleeps and waits for a CPU; per CPU, idle seconds."""
    names = {}
    ran = collections.Counter()
    on_since = {}
    off = {}  # tid -> (time it left a CPU, whether it blocked)
    sleeps = collections.defaultdict(list)
    waits = collections.defaultdict(list)
    idle = collections.Counter()
    first = last = None
    for line in lines:
        m = SWITCH.match(line)
        if not m:
            continue
        cpu, t = int(m.group(1)), float(m.group(2))
        prev_name, prev, state, next_name, nxt = m.group(3), int(m.group(4)), m.group(5), m.group(6), int(m.group(7))
        first = t if first is None else first
        last = t
        # Time on a CPU counts from a switch in seen within the window to the next switch out.
        if prev == 0:
            if (0, cpu) in on_since:
                idle[cpu] += t - on_since.pop((0, cpu))
        else:
            if prev in on_since:
                ran[prev] += t - on_since.pop(prev)
            names[prev] = prev_name
            # "R" or "R+": preempted, still runnable; anything else: it blocked
            off[prev] = (t, not state.startswith("R"))
        if nxt == 0:
            on_since[(0, cpu)] = t
        else:
            names[nxt] = next_name
            on_since[nxt] = t
            if nxt in off:
                left, blocked = off.pop(nxt)
                (sleeps if blocked else waits)[nxt].append(t - left)
    return names, ran, sleeps, waits, idle, (last - first) if first is not None else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--delay", type=float, default=5.0, help="seconds after the start before recording")
    ap.add_argument("--seconds", type=float, default=3.0, help="seconds to record")
    ap.add_argument("--threads", type=int, default=4, help="how many of the longest-running threads to show")
    ap.add_argument("--comm", help="show the threads whose name matches this regular expression instead")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        ap.error("no command given (put it after --)")
    if shutil.which("perf") is None:
        sys.exit("sleeps.py: perf not found (apt-get install -y linux-perf)")
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "sched.data")
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
        try:
            time.sleep(a.delay)
            if proc.poll() is not None:
                sys.exit(f"sleeps.py: the command ended within --delay {a.delay} s")
            subprocess.run(["perf", "record", "-q", "-k", "CLOCK_MONOTONIC", "-e", "sched:sched_switch", "-a",
                            "-o", data, "--", "sleep", str(a.seconds)], check=True)
            proc.wait()
        finally:
            if proc.poll() is None:  # interrupted: let it stop its own children first
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        script = subprocess.run(["perf", "script", "-i", data], check=True, capture_output=True, text=True).stdout
    names, ran, sleeps, waits, idle, span = analyse(script.splitlines())
    if span <= 0:
        sys.exit("sleeps.py: no context switches recorded")
    if a.comm:
        shown = [t for t in ran if re.search(a.comm, names.get(t, ""))]
        shown.sort(key=lambda t: -ran[t])
    else:
        shown = [t for t, _ in ran.most_common() if t != 0 and names.get(t) != "perf"][:a.threads]
    print(f"{span:.2f} s recorded; {' '.join(f'CPU {c} idle {100 * s / span:.1f} %' for c, s in sorted(idle.items()))}")
    print("| thread | tid | run % | sleeps /s | asleep % | one sleep p50 µs | p90 µs | preempted % |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for t in shown:
        s = sorted(sleeps[t])
        print(f"| {names.get(t, '?')} | {t} | {100 * ran[t] / span:.1f} | {len(s) / span:.0f} | {100 * sum(s) / span:.1f} "
              f"| {1e6 * percentile(s, 0.5):.0f} | {1e6 * percentile(s, 0.9):.0f} | {100 * sum(waits[t]) / span:.1f} |")


if __name__ == "__main__":
    main()
