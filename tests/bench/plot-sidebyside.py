#!/usr/bin/env python3
"""plot-sidebyside.py - the plots of doc/performance.md and doc/accuracy.md
as SVG, drawn from the CSV files tests/bench/run-sidebyside.sh writes
(python3's standard library only).

usage: plot-sidebyside.py CSV_DIR [SVG_DIR]

Reads CSV_DIR/overhead.csv, steady.csv, scale.csv, accuracy-configured.csv and
accuracy-learn.csv (those present) and writes into SVG_DIR (default
CSV_DIR): sidebyside-overhead.svg and sidebyside-steady.svg (CPU per
job-second of slurmd, the slurmstepds and the ceems agent, for each way:
over whole jobs, and while jobs run), sidebyside-scale.svg
(the agent's CPU per second against the number of jobs) and
accuracy-energy.svg (each job's package energy: the model's truth,
ceems, and the node's energy over the job's life as Slurm counts it);
and CSV_DIR/summary.md, the tables of the docs.
"""
import csv
import os
import sys
from xml.sax.saxutils import escape

COLOURS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1"]


def rows(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class Svg:
    def __init__(self, width, height, title):
        self.w, self.h = width, height
        self.parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" '
                      'height="%d" viewBox="0 0 %d %d">' % (width, height,
                                                           width, height),
                      '<rect width="100%" height="100%" fill="white"/>']
        self.text(width / 2, 20, title, anchor="middle", size=14)

    def text(self, x, y, s, anchor="start", size=12, rotate=None):
        tr = ' transform="rotate(%d %.1f %.1f)"' % (rotate, x, y) if rotate else ""
        self.parts.append('<text x="%.1f" y="%.1f" text-anchor="%s" '
                          'font-family="sans-serif" font-size="%d"%s>%s</text>'
                          % (x, y, anchor, size, tr, escape(str(s))))

    def rect(self, x, y, w, h, fill):
        self.parts.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" '
                          'fill="%s"/>' % (x, y, w, max(h, 0), fill))

    def line(self, x1, y1, x2, y2, colour="#333", dash=None):
        d = ' stroke-dasharray="%s"' % dash if dash else ""
        self.parts.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" '
                          'stroke="%s"%s/>' % (x1, y1, x2, y2, colour, d))

    def legend(self, x, y, names):
        for i, n in enumerate(names):
            self.rect(x, y + i * 18 - 10, 12, 12, COLOURS[i])
            self.text(x + 18, y + i * 18, n)

    def save(self, path):
        with open(path, "w") as f:
            f.write("\n".join(self.parts + ["</svg>"]) + "\n")


def nice_top(v):
    """A round axis maximum above v."""
    if v <= 0:
        return 1.0
    p = 10 ** len(str(int(v))) / 10 if v >= 1 else 1.0
    while p > v:
        p /= 10
    for m in (1, 2, 2.5, 5, 10):
        if m * p >= v:
            return m * p
    return 10 * p


def axis(svg, x0, y0, plot_h, top, label, ticks=5, plot_w=0):
    svg.line(x0, y0, x0, y0 - plot_h)
    for i in range(ticks + 1):
        v = top * i / ticks
        y = y0 - plot_h * i / ticks
        svg.line(x0 - 4, y, x0, y)
        if plot_w and i:
            svg.line(x0, y, x0 + plot_w, y, "#ddd")
        svg.text(x0 - 6, y + 4, ("%.3g" % v), anchor="end", size=11)
    svg.text(x0 - 48, y0 - plot_h / 2, label, anchor="middle", rotate=-90)


def plot_overhead(data, out, filename="sidebyside-overhead.svg",
                  what="jobs of 40 s, starts and ends included"):
    ways = [("slurm", "Slurm, task=1"), ("ceems", "ceems"),
            ("ceems1s", "ceems, all 1 s"), ("none", "neither")]
    ways = [w for w in ways if any(r["way"] == w[0] for r in data)]
    parts = [("slurmd_cpu_s", "slurmd"), ("stepd_cpu_s", "slurmstepd + jobs"),
             ("agent_cpu_s", "ceems agent")]
    mean = {}
    if not ways:
        return
    for w, _ in ways:
        rs = [r for r in data if r["way"] == w]
        mean[w] = [sum(float(r[k]) for r in rs) / sum(float(r["job_s"]) for r in rs)
                   * 1000 for k, _ in parts]
    top = nice_top(max(sum(v) for v in mean.values()) * 1.1)
    svg = Svg(960, 420, "CPU time per job-second (ms): %s, %d run(s) each"
              % (what, len([r for r in data if r["way"] == ways[0][0]])))
    x0, y0, ph, pw = 80, 340, 280, 90 * len(ways)
    axis(svg, x0, y0, ph, top, "ms CPU per job-second", plot_w=pw)
    bw = pw / len(ways)
    for i, (w, name) in enumerate(ways):
        y = y0
        for j, v in enumerate(mean[w]):
            h = v / top * ph
            svg.rect(x0 + i * bw + bw * 0.2, y - h, bw * 0.6, h, COLOURS[j])
            y -= h
        svg.text(x0 + i * bw + bw / 2, y - 6, "%.3f" % sum(mean[w]), anchor="middle")
        svg.text(x0 + i * bw + bw / 2, y0 + 18, name, anchor="middle", size=11)
    svg.line(x0, y0, x0 + pw, y0)
    for j, (_, n) in enumerate(parts):
        svg.rect(x0 + j * 150, y0 + 40, 12, 12, COLOURS[j])
        svg.text(x0 + j * 150 + 18, y0 + 50, n)
    # right: what each way adds to the node without either
    if "none" not in mean:
        svg.save(os.path.join(out, filename))
        return
    base = sum(mean["none"])
    added = [(w, n, sum(mean[w]) - base) for w, n in ways if w != "none"]
    top2 = nice_top(max([a for _, _, a in added] + [1e-3]) * 1.15)
    x1, pw2 = x0 + pw + 160, 90 * len(added)
    svg.text(x1 + pw2 / 2, 46, "added over neither", anchor="middle")
    axis(svg, x1, y0, ph, top2, "ms CPU per job-second", plot_w=pw2)
    bw = pw2 / len(added)
    for i, (w, name, a) in enumerate(added):
        h = max(a, 0) / top2 * ph
        svg.rect(x1 + i * bw + bw * 0.2, y0 - h, bw * 0.6, h, COLOURS[3])
        svg.text(x1 + i * bw + bw / 2, y0 - h - 6, "%.3f" % a, anchor="middle")
        svg.text(x1 + i * bw + bw / 2, y0 + 18, name, anchor="middle", size=11)
    svg.line(x1, y0, x1 + pw2, y0)
    svg.save(os.path.join(out, filename))


def plot_scale(data, out):
    if not data:
        return
    top = nice_top(max(float(r["agent_cpu_ms_per_s"]) for r in data) * 1.15)
    svg = Svg(520, 380, "The ceems agent: CPU per second (ms/s), 1 s tick")
    x0, y0, ph, pw = 80, 320, 260, 400
    axis(svg, x0, y0, ph, top, "ms CPU per second", plot_w=pw)
    bw = pw / len(data)
    for i, r in enumerate(data):
        v = float(r["agent_cpu_ms_per_s"])
        h = v / top * ph
        svg.rect(x0 + i * bw + bw * 0.2, y0 - h, bw * 0.6, h, COLOURS[0])
        svg.text(x0 + i * bw + bw / 2, y0 - h - 6, "%.2f" % v, anchor="middle")
        label = "idle" if r["jobs"] == "0" else r["jobs"] + " jobs"
        svg.text(x0 + i * bw + bw / 2, y0 + 18, label, anchor="middle")
    svg.line(x0, y0, x0 + pw, y0)
    svg.save(os.path.join(out, "sidebyside-scale.svg"))


def plot_accuracy(conf, learn, out):
    if not conf:
        return
    series = [("truth_j", "model's truth", conf), ("ceems_j", "ceems", conf),
              ("slurm_j", "Slurm-style (node over the job's life)", conf)]
    if learn:
        series.append(("ceems_j", "ceems, idle power learned", learn))
    jobs = [r["kind"] for r in conf]
    value = {}
    for k, name, rs in series:
        for r in rs:
            value[(name, r["kind"])] = (float(r[k]) if r[k] else 0.0,
                                        r.get("ceems_err_pct" if k == "ceems_j"
                                              else "slurm_err_pct" if k == "slurm_j"
                                              else "", ""))
    top = nice_top(max(v[0] for v in value.values()) * 1.1)
    svg = Svg(760, 420, "Package energy per job (J), jobs sharing a node")
    x0, y0, ph, pw = 80, 350, 290, 440
    axis(svg, x0, y0, ph, top, "joules", plot_w=pw)
    gw = pw / len(jobs)
    bw = gw * 0.8 / len(series)
    for i, job in enumerate(jobs):
        for j, (k, name, _) in enumerate(series):
            v, err = value.get((name, job), (0.0, ""))
            h = v / top * ph
            x = x0 + i * gw + gw * 0.1 + j * bw
            svg.rect(x, y0 - h, bw * 0.9, h, COLOURS[j])
            if err:
                svg.text(x + bw * 0.45, y0 - h - 4, "%+.0f%%" % float(err)
                         if abs(float(err)) >= 10 else "%+.1f%%" % float(err),
                         anchor="middle", size=9)
        svg.text(x0 + i * gw + gw / 2, y0 + 18, job, anchor="middle")
    svg.line(x0, y0, x0 + pw, y0)
    svg.legend(x0 + pw + 16, 80, [n for _, n, _ in series])
    svg.text(x0 + pw + 16, 80 + 18 * len(series) + 10,
             "labels: error against the truth", size=10)
    svg.save(os.path.join(out, "accuracy-energy.svg"))


def steady_summary(st):
    """The steady chunk's tables: each way's mean over the rounds, then
    each round with what ceems and Slurm's sampler added over neither in
    that round, their ratio, and what a bare wake-up cost meanwhile."""
    out = ["Jobs running (no start or end in the window), ms CPU per job-second, "
           "mean of %d round(s):" % len({r.get("round", "1") for r in st}), "",
           "| way | jobs | window s | slurmd | slurmstepd + jobs | agent | total "
           "| added over none |", "|---|--:|--:|--:|--:|--:|--:|--:|"]
    ways = []
    for r in st:
        if r["way"] not in ways:
            ways.append(r["way"])

    def per_job_s(rs):
        js = sum(float(r["jobs"]) * float(r["window_s"]) for r in rs)
        return [sum(float(r[k]) for r in rs) / js * 1000 for k in
                ("slurmd_cpu_s", "stepd_cpu_s", "agent_cpu_s")]

    cell = {w: per_job_s([r for r in st if r["way"] == w]) for w in ways}
    for w in ways:
        rs = [r for r in st if r["way"] == w]
        v = cell[w]
        added = ("%.3f" % (sum(v) - sum(cell["none"]))) if "none" in cell else ""
        out.append("| %s | %s | %s | %.3f | %.3f | %.3f | %.3f | %s |" % (
            w, rs[0]["jobs"], rs[0]["window_s"], v[0], v[1], v[2], sum(v), added))
    out.append("")
    rounds = sorted({r.get("round", "1") for r in st}, key=int)
    if "none" not in cell or "slurm" not in cell:
        return out
    out += ["Per round, added over none in the same round (ms CPU per job-second), "
            "ceems against Slurm's sampler, and a bare wake-up's CPU meanwhile "
            "(µs, the mean over the ways' windows):", "",
            "| round | slurm | ceems | ceems / slurm | ceems, agent alone / slurm "
            "| bare wake-up µs |", "|--:|--:|--:|--:|--:|--:|"]
    ratios = []
    for rd in rounds:
        rs = {r["way"]: r for r in st if r.get("round", "1") == rd}
        if not all(w in rs for w in ("none", "slurm", "ceems")):
            continue
        tot = {w: sum(per_job_s([rs[w]])) for w in rs}
        slurm = tot["slurm"] - tot["none"]
        ceems = tot["ceems"] - tot["none"]
        agent = per_job_s([rs["ceems"]])[2]
        wake = [float(r["wakeup_us"]) for r in rs.values() if r.get("wakeup_us")]
        ratio = ceems / slurm if slurm > 0 else float("nan")
        ratios.append(ratio)
        out.append("| %s | %.3f | %.3f | %.3f | %.3f | %s |" % (
            rd, slurm, ceems, ratio, agent / slurm if slurm > 0 else float("nan"),
            ("%.0f" % (sum(wake) / len(wake))) if wake else ""))
    if ratios:
        ratios.sort()
        out += ["", "Median ratio over %d round(s): %.3f" % (len(ratios),
                                                            ratios[len(ratios) // 2])]
    out.append("")
    return out


def summary(src):
    """The tables of the docs, as markdown, from the CSV files."""
    out = []
    data = rows(os.path.join(src, "overhead.csv"))
    ways = []
    for r in data:
        if r["way"] not in ways:
            ways.append(r["way"])
    if data:
        out.append("| way | rounds | slurmd | slurmstepd + jobs | agent | total "
                   "| added over none |")
        out.append("|---|--:|--:|--:|--:|--:|--:|")
        tot = {}
        for w in ways:
            rs = [r for r in data if r["way"] == w]
            js = sum(float(r["job_s"]) for r in rs)
            v = [sum(float(r[k]) for r in rs) / js * 1000
                 for k in ("slurmd_cpu_s", "stepd_cpu_s", "agent_cpu_s")]
            tot[w] = (len(rs), v)
        base = sum(tot["none"][1]) if "none" in tot else None
        for w in ways:
            n, v = tot[w]
            added = "" if base is None else "%.3f" % (sum(v) - base)
            out.append("| %s | %d | %.3f | %.3f | %.3f | %.3f | %s |"
                       % (w, n, v[0], v[1], v[2], sum(v), added))
        out.append("")
        out.append("Per round, ms CPU per job-second (added over none):")
        out.append("")
        for r in sorted({r["round"] for r in data}):
            rs = {x["way"]: x for x in data if x["round"] == r}
            cell = {w: sum(float(rs[w][k]) for k in ("slurmd_cpu_s", "stepd_cpu_s",
                                                    "agent_cpu_s"))
                    / float(rs[w]["job_s"]) * 1000 for w in rs}
            if "none" in cell:
                out.append("- round %s: " % r + ", ".join(
                    "%s %.3f" % (w, cell[w] - cell["none"]) for w in ways
                    if w in cell and w != "none"))
        out.append("")
    st = rows(os.path.join(src, "steady.csv"))
    if st:
        out.extend(steady_summary(st))
    lat = rows(os.path.join(src, "latency.csv"))
    if lat:
        out.append("| way | jobs | submit to start, median ms | max ms "
                   "| sbatch --wait, median ms | max ms |")
        out.append("|---|--:|--:|--:|--:|--:|")
        for w in ways:
            rs = [r for r in lat if r["way"] == w]
            a = sorted(int(r["submit_to_start_ms"]) for r in rs)
            b = sorted(int(r["wait_ms"]) for r in rs)
            if rs:
                out.append("| %s | %d | %d | %d | %d | %d |" % (
                    w, len(rs), a[len(a) // 2], a[-1], b[len(b) // 2], b[-1]))
        out.append("")
    sc = rows(os.path.join(src, "scale.csv"))
    if sc:
        out.append("| jobs | window s | agent CPU s | ms per s |")
        out.append("|--:|--:|--:|--:|")
        for r in sc:
            out.append("| %s | %s | %s | %s |" % (r["jobs"], r["window_s"],
                                              r["agent_cpu_s"],
                                              r["agent_cpu_ms_per_s"]))
        out.append("")
    for idle in ("configured", "learn"):
        acc = rows(os.path.join(src, "accuracy-%s.csv" % idle))
        if not acc:
            continue
        out.append("Idle power %s:" % idle)
        out.append("")
        out.append("| job | life s | CPU s | truth J | ceems J | error | "
                   "Slurm-style J | error |")
        out.append("|---|--:|--:|--:|--:|--:|--:|--:|")
        for r in acc:
            out.append("| %s | %.1f | %.1f | %.1f | %.1f | %+.2f%% | %.1f | %+.1f%% |"
                       % (r["kind"], float(r["life_s"]), float(r["cpu_s"]),
                          float(r["truth_j"]), float(r["ceems_j"] or 0),
                          float(r["ceems_err_pct"]), float(r["slurm_j"]),
                          float(r["slurm_err_pct"])))
        out.append("")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) not in (2, 3):
        sys.stderr.write("usage: plot-sidebyside.py CSV_DIR [SVG_DIR]\n")
        return 2
    src = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) == 3 else src
    plot_overhead(rows(os.path.join(src, "overhead.csv")), out)
    steady = rows(os.path.join(src, "steady.csv"))
    for r in steady:
        r["job_s"] = str(float(r["jobs"]) * float(r["window_s"]))
    plot_overhead(steady, out, "sidebyside-steady.svg", "jobs running, no start or end")
    plot_scale(rows(os.path.join(src, "scale.csv")), out)
    plot_accuracy(rows(os.path.join(src, "accuracy-configured.csv")),
                  rows(os.path.join(src, "accuracy-learn.csv")), out)
    with open(os.path.join(src, "summary.md"), "w") as f:
        f.write(summary(src))
    return 0


if __name__ == "__main__":
    sys.exit(main())
