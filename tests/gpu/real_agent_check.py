#!/usr/bin/env python3
"""real_agent_check.py - the checks of real-agent.sh: reads the job's
record as the node agent wrote it to its spool, the driver's times of the
job's registration and deregistration, and nvidia-smi's samples taken
over the same seconds; compares them and prints TAP.  Only the standard
library."""

import json
import os
import sys

from smi_tap import (check, fmt, integrate, mean, number, read_lines,
                     report, smi_time)


def keyed(lines):
    out = {}
    for line in lines:
        k, _, v = line.partition(" ")
        out[k] = v
    return out


def load_record(out):
    try:
        with open(os.path.join(out, "record.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def main(out):
    rd = lambda name: read_lines(os.path.join(out, name))
    job = keyed(rd("job.txt"))
    job_rc = (rd("job.rc") or ["?"])[0]
    check(job_rc == "0", "the job started, ran and ended at the agent",
          " ".join(["rc %s" % job_rc] + rd("job.err")))
    check(job.get("command_status") == "0", "the CUDA load ran",
          "wait status %s" % job.get("command_status", "?"))
    rec = load_record(out)
    check(rec is not None, "the agent wrote the job's record to its spool",
          " ".join(l for l in rd("agent.log") if "error" in l or
                   "warning" in l)[:2000])
    if rec is None or "registered_unix" not in job or \
            "deregistered_unix" not in job:
        return report()
    t0 = float(job["registered_unix"])
    t1 = float(job["deregistered_unix"])
    m = rec.get("measurements", {})
    check(rec.get("finalized_by") == "extern" and
          abs(m.get("elapsed_s", -1) - (t1 - t0)) <= 1.5,
          "the record is the job's lifetime at the agent",
          "finalized_by %s, elapsed %s s, the driver's %.1f s"
          % (rec.get("finalized_by"), m.get("elapsed_s"), t1 - t0))

    dev = (rd("smi-device.csv") or [""])[0].split(", ")
    gpus = m.get("gpus", [])
    g = gpus[0] if len(gpus) == 1 else {}
    check(len(gpus) == 1 and len(dev) > 1 and g.get("uuid") == dev[1],
          "the record holds the job's GPU, matched from its device file",
          "%s vs nvidia-smi's %s (ids %s)"
          % ([x.get("uuid") for x in gpus], dev[1] if len(dev) > 1 else "-",
             job.get("gpu_id")))

    smi = []
    for line in rd("smi.csv"):
        f = line.split(", ")
        if len(f) != 3:
            continue
        try:
            smi.append((smi_time(f[0]), number(f[1]), number(f[2])))
        except ValueError:
            continue
    smi_j, pts = integrate([(t, w) for t, w, _ in smi if w is not None],
                           t0, t1)
    span = t1 - t0
    led = m.get("ledger", {}).get("gpu", {})
    joules = led.get("joules")
    check(joules is not None and len(pts) >= 5 * span / 2 and
          abs(joules - smi_j) <= 0.10 * smi_j,
          "the job's GPU energy agrees with nvidia-smi's power over its "
          "lifetime within 10%",
          "%.1f s: ceems %s J (%s W), nvidia-smi %.1f J (%.1f W), %+.1f %%, "
          "%d samples" % (span, fmt(joules),
                          fmt(joules / span if joules else None), smi_j,
                          smi_j / span, 100 * (joules - smi_j) / smi_j
                          if joules and smi_j else 0, len(pts)))
    check(g.get("energy_j") is not None and joules is not None and
          abs(g["energy_j"] - joules) <= 0.001 * joules + 0.01,
          "the GPU's energy is the ledger's GPU domain",
          "gpus[0].energy_j %s J, ledger %s J" % (fmt(g.get("energy_j")),
                                                  fmt(joules)))
    check(led.get("coverage") is not None and led["coverage"] >= 0.9,
          "the GPU domain covers the job's lifetime",
          "coverage %s, covered %s s" % (led.get("coverage"),
                                         led.get("covered_s")))
    smi_util = mean([u for t, _, u in smi if t0 <= t <= t1])
    util = g.get("util_pct")
    check(util is not None and smi_util is not None and
          abs(util - smi_util) <= 10,
          "the job's GPU utilisation agrees with nvidia-smi's",
          "ceems %s %%, nvidia-smi %s %%" % (fmt(util), fmt(smi_util)))
    sm = g.get("sm_active_pct")
    check(sm is not None and smi_util is not None and sm > smi_util / 2
          and sm <= (util or 0) + 5,
          "the job's SM activity (NVML GPM) is in the record, with the load",
          "sm active %s %%, occupancy %s %%, fp %s %%, tensor %s %%; "
          "utilisation %s %%"
          % (fmt(sm), fmt(g.get("sm_occupancy_pct")),
             fmt(g.get("fp_active_pct")), fmt(g.get("tensor_active_pct")),
             fmt(util)))
    check(g.get("mem_peak_bytes", 0) > 0 and
          g.get("mem_total_bytes", 0) >= g.get("mem_peak_bytes", 0),
          "the job's GPU memory peak is in the record",
          "peak %s of %s bytes" % (g.get("mem_peak_bytes"),
                                   g.get("mem_total_bytes")))
    return report()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
