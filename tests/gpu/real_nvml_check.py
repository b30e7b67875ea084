#!/usr/bin/env python3
"""real_nvml_check.py - the checks of real-nvml.sh: reads the probe's CSV
(what the project's NVML backend enumerated and read) and nvidia-smi's
CSV taken over the same seconds, compares them and prints TAP.  Only the
standard library."""

import os
import sys

from smi_tap import (check, fmt, integrate, mean, number, read_lines,
                     report, smi_time)


def bus_id_key(s):
    """nvidia-smi writes 00000000:19:00.0, the backend 0000:19:00.0."""
    s = s.strip().lower()
    dom, _, rest = s.partition(":")
    try:
        return "%x:%s" % (int(dom, 16), rest)
    except ValueError:
        return s


def main(out):
    rd = lambda name: read_lines(os.path.join(out, name))
    probe_rc = (rd("probe.rc") or ["?"])[0]
    load_rc = (rd("gpu_load.rc") or ["?"])[0]
    check(probe_rc == "0", "the probe ran to the end",
          "rc %s: %s" % (probe_rc, " ".join(rd("probe.err"))))
    check(load_rc == "0", "the CUDA load ran",
          "rc %s: %s" % (load_rc, " ".join(rd("gpu_load.log"))))

    devices, samples = {}, {}
    for line in rd("probe.csv"):
        f = line.split(",")
        if f[0] == "device" and len(f) == 12:
            devices[int(f[1])] = f
        elif f[0] == "sample" and len(f) == 12:
            samples.setdefault(int(f[1]), []).append(
                [float(f[2])] + [number(x) for x in f[3:]])
    smi_dev = [l.split(",") for l in rd("smi-devices.csv")]
    check(len(devices) == len(smi_dev) and devices,
          "the backend enumerates the GPUs nvidia-smi lists",
          "%d vs %d" % (len(devices), len(smi_dev)))

    smi = {}
    for line in rd("smi.csv"):
        f = line.split(",")
        if len(f) != 5:
            continue
        try:
            smi.setdefault(int(f[0]), []).append(
                (smi_time(f[1]), number(f[2]), number(f[3]), number(f[4])))
        except ValueError:
            continue
    l0 = float(rd("load-start")[0])
    l1 = float(rd("load-end")[0])

    for s in smi_dev:
        i = int(s[0])
        d = devices.get(i)
        if d is None:
            check(False, "GPU %d enumerated" % i)
            continue
        check_identity(i, d, s)
        check_readings(i, d, samples.get(i, []), smi.get(i, []), l0, l1)

    return report()


def check_identity(i, d, s):
    _, _, uuid, bus, name, dev, mem, slices, has_counter, unit, maxw, _ = d
    check(uuid == s[1].strip(), "GPU %d: UUID" % i, "%s vs %s" % (uuid, s[1]))
    check(bus_id_key(bus) == bus_id_key(s[2]), "GPU %d: PCI bus id" % i,
          "%s vs %s" % (bus, s[2]))
    check(name == s[3].strip(), "GPU %d: model name" % i,
          "%s vs %s" % (name, s[3]))
    smi_mib = number(s[4])
    check(smi_mib is not None and abs(int(mem) / 1048576 - smi_mib) < 1,
          "GPU %d: memory size" % i,
          "%.0f MiB vs %s MiB" % (int(mem) / 1048576, s[4].strip()))
    major, _, minor = dev.partition(":")
    check(major == "195" and os.path.exists("/dev/nvidia%s" % minor),
          "GPU %d: its device file /dev/nvidia%s" % (i, minor), dev)
    smi_w = number(s[5])
    check(smi_w is not None and abs(float(maxw) - smi_w) <= 1,
          "GPU %d: power limit" % i, "%s W vs %s W" % (maxw, s[5].strip()))
    check(has_counter == "1", "GPU %d: has the cumulative energy counter" % i,
          "%s J per count, %s SMs" % (unit, slices))


def check_readings(i, d, samples, smi, l0, l1):
    unit = float(d[9])
    counts = [s[1] for s in samples if s[1] is not None]
    check(counts and all(b >= a for a, b in zip(counts, counts[1:])),
          "GPU %d: the energy counter never goes back" % i,
          "%d readings" % len(counts))
    windows = (("load", l0 + 2, l1 - 1),
               ("idle", samples[0][0] + 1 if samples else 0, l0 - 0.5))
    for label, t0, t1 in windows:
        inside = [s for s in samples if t0 <= s[0] <= t1 and s[1] is not None]
        if len(inside) < 5:
            check(False, "GPU %d %s: enough readings" % (i, label),
                  "%d" % len(inside))
            continue
        ta, tb = inside[0][0], inside[-1][0]
        counter_j = (inside[-1][1] - inside[0][1]) * unit
        smi_j, pts = integrate([(t, w) for t, w, _, _ in smi if w is not None],
                               ta, tb)
        probe_w_j, _ = integrate([(s[0], s[2]) for s in inside
                                  if s[2] is not None], ta, tb)
        span = tb - ta
        check(len(pts) >= 5 and abs(counter_j - smi_j) <= 0.10 * smi_j,
              "GPU %d %s: the energy counter agrees with nvidia-smi's power "
              "within 10%%" % (i, label),
              "%.1f s: counter %.1f J (%.1f W), nvidia-smi %.1f J (%.1f W), "
              "backend power %.1f J" % (span, counter_j, counter_j / span,
                                        smi_j, smi_j / span if span else 0,
                                        probe_w_j))
        util = mean([s[3] for s in inside])
        smi_util = mean([u for t, _, u, _ in smi if ta <= t <= tb])
        sm = mean([s[6] for s in inside])
        if label == "load":
            check(util is not None and util >= 90 and smi_util is not None
                  and abs(util - smi_util) <= 10,
                  "GPU %d load: utilisation agrees with nvidia-smi's" % i,
                  "backend %s %%, nvidia-smi %s %%" % (fmt(util),
                                                       fmt(smi_util)))
            check(sm is not None and sm >= 50,
                  "GPU %d load: SM activity (NVML GPM) read and high" % i,
                  "sm active %s %%, occupancy %s %%, tensor %s %%, fp %s %%"
                  % (fmt(sm), fmt(mean([s[7] for s in inside])),
                     fmt(mean([s[8] for s in inside])),
                     fmt(mean([s[9] for s in inside]))))
        else:
            check(util is not None and util <= 5 and
                  (sm is None or sm <= 5),
                  "GPU %d idle: utilisation and SM activity low" % i,
                  "utilisation %s %%, sm active %s %%" % (fmt(util), fmt(sm)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
