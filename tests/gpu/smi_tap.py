"""smi_tap.py - what the real-GPU checks (real_nvml_check.py,
real_agent_check.py) share: their TAP list, reading the CSV files that
nvidia-smi and the probes wrote, and integrating sampled power over a
time window.  Only the standard library."""

import datetime

tests = []


def check(ok, what, diag=""):
    tests.append((bool(ok), what, diag))


def report():
    """Print the checks as TAP; 0 when all passed, else 1."""
    print("1..%d" % len(tests))
    for n, (ok, what, diag) in enumerate(tests, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", n, what))
        if diag:
            print("# %s" % diag)
    return 0 if all(t[0] for t in tests) else 1


def read_lines(path):
    try:
        with open(path) as f:
            return [l.rstrip("\n") for l in f if l.strip()]
    except OSError:
        return []


def number(s):
    s = s.strip()
    if s in ("-", "", "[N/A]", "N/A"):
        return None
    try:
        return float(s)
    except ValueError:
        return None


def smi_time(s):
    # "2026/11/26 23:59:59.123", the node's local time.
    t = datetime.datetime.strptime(s.strip(), "%Y/%m/%d %H:%M:%S.%f")
    return t.timestamp()


def integrate(points, t0, t1):
    """Trapezoid of (t, w) points over [t0, t1], in joules, the power at
    the ends taken from the nearest sample inside."""
    pts = sorted(p for p in points if t0 <= p[0] <= t1)
    if not pts:
        return 0.0, pts
    full = [(t0, pts[0][1])] + pts + [(t1, pts[-1][1])]
    return sum((b[0] - a[0]) * (a[1] + b[1]) / 2
               for a, b in zip(full, full[1:])), pts


def mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def fmt(v):
    return "-" if v is None else "%.1f" % v
