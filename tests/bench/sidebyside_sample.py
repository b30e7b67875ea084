#!/usr/bin/env python3
"""sidebyside_sample.py - the independent observer of the side-by-side
benchmarks (tests/bench/run-sidebyside.sh) and of accuracy-mix.bats.

It watches, every PERIOD seconds until SIGTERM, what the jobs of the
harness cluster (tests/harness/slurm.sh, NodeName=localhost) do and
what the node's simulated RAPL counters (tests/doubles/fake-rapl) say,
without using anything of ceems:

- each job cgroup Slurm creates (cgroup v1: cpuacct and cpuset under
  slurm_localhost/uid_*/job_*; v2: the localhost_slurmstepd.scope's
  job_*): when it was first and last seen, the CPUs of its cpuset, its
  CPU time at the last sight (the cgroup is new, so that is all it used);
- the node's package and DRAM energy, unwrapped (the counters wrap at
  max_energy_range_uj), at each job's first and last sight: the energy of
  the node over the job's life, which is what Slurm's energy accounting
  gives a job (ConsumedEnergy is the node's counter over the job's life).

On SIGTERM it writes CSV (jobid,start_s,end_s,cores,cpu_s,node_package_j,
node_dram_j) to OUT and exits.  Times are CLOCK_MONOTONIC seconds.

usage: sidebyside_sample.py --sys ROOT --out FILE [--period 0.05]
"""
import argparse
import glob
import os
import re
import signal
import sys
import time

CG = "/sys/fs/cgroup"
V2_SCOPE = CG + "/system.slice/localhost_slurmstepd.scope"


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def count_cpus(text):
    """Number of CPUs in a kernel CPU list such as 0-3,8."""
    n = 0
    for part in (text or "").strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


class Counter:
    """One RAPL zone's energy_uj, unwrapped."""

    def __init__(self, zone):
        self.path = zone + "/energy_uj"
        self.range = int(read(zone + "/max_energy_range_uj") or 0)
        self.last = None
        self.total_uj = 0

    def update(self):
        text = read(self.path)
        if text is None:
            return
        v = int(text)
        if self.last is not None:
            d = v - self.last
            if d < 0:
                d += self.range + 1
            self.total_uj += d
        self.last = v

    def joules(self):
        return self.total_uj / 1e6


def job_dirs():
    """{jobid: (cpu time file, cpuset file, v2)} of the live job cgroups."""
    out = {}
    if os.path.isdir(V2_SCOPE):
        for d in glob.glob(V2_SCOPE + "/job_*"):
            out[d.rsplit("_", 1)[1]] = (d + "/cpu.stat",
                                        d + "/cpuset.cpus.effective", True)
        return out
    for d in glob.glob(CG + "/cpuacct/slurm_localhost/uid_*/job_*"):
        job = d.rsplit("_", 1)[1]
        rel = d[len(CG + "/cpuacct/"):]
        out[job] = (d + "/cpuacct.usage",
                    CG + "/cpuset/" + rel + "/cpuset.cpus", False)
    return out


def cpu_seconds(path, v2):
    text = read(path)
    if text is None:
        return None
    if v2:
        m = re.search(r"^usage_usec (\d+)", text, re.M)
        return int(m.group(1)) / 1e6 if m else None
    return int(text) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sys", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--period", type=float, default=0.05)
    a = ap.parse_args()
    rapl = a.sys + "/class/powercap/intel-rapl:0"
    pkg, dram = Counter(rapl), Counter(rapl + "/intel-rapl:0:1")
    jobs = {}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    while not stop:
        now = time.monotonic()
        pkg.update()
        dram.update()
        for job, (usage, cpuset, v2) in job_dirs().items():
            cpu = cpu_seconds(usage, v2)
            if cpu is None:
                continue
            j = jobs.get(job)
            if j is None:
                cores = count_cpus(read(cpuset))
                j = jobs[job] = {"start": now, "cores": cores,
                                 "pkg0": pkg.joules(), "dram0": dram.joules()}
            if not j["cores"]:
                j["cores"] = count_cpus(read(cpuset))
            j.update(end=now, cpu=cpu, pkg1=pkg.joules(), dram1=dram.joules())
        time.sleep(a.period)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write("jobid,start_s,end_s,cores,cpu_s,node_package_j,node_dram_j\n")
        for job in sorted(jobs, key=int):
            j = jobs[job]
            f.write("%s,%.3f,%.3f,%d,%.6f,%.6f,%.6f\n" % (
                job, j["start"], j["end"], j["cores"], j["cpu"],
                j["pkg1"] - j["pkg0"], j["dram1"] - j["dram0"]))
    os.rename(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
