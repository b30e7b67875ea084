#!/usr/bin/env python3
"""grafana-check.py - the dashboards' tests (tests/integration/grafana.bats).

  grafana-check.py validate DASHBOARDS_DIR
      each dashboards/*.json is a Grafana 10/11 dashboard whose panels
      query the PostgreSQL data source picked by the variable
      "datasource"; the provisioning examples name what they must.
  grafana-check.py expand-selftest
      the macro expander against Grafana's own examples.
  grafana-check.py store RECORD_GEN WORKDIR WRITER_ROLE
      stores the test's jobs (grafana_data.py) through the writer role.
  grafana-check.py check DASHBOARDS_DIR WORKDIR ROLE VISIBILITY
      runs every panel's SQL (and every variable's), expanded as Grafana
      would (grafana_expand.py), as ROLE against the database of the
      libpq environment, and compares each result with what the stored
      jobs that ROLE may see must give.  VISIBILITY says which those are:
      "all", "user:NAME" or "account:NAME" (a coordinator).  Every panel
      has a check here: a panel without one fails the test.

Numbers are compared to 1e-9 (relative): sums in another order differ in
the last bits.  NULL must be NULL: unknown is not zero.
"""

import csv
import datetime
import io
import json
import math
import statistics
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grafana_data  # noqa: E402
import grafana_expand  # noqa: E402

UTC = datetime.timezone.utc
RANGE = (grafana_data.T0 + 86400, grafana_data.T0 + 3 * 86400)
INTERVAL = "6h"
FAILURES = []


def fail(msg):
    FAILURES.append(msg)


def run_sql(role, sql):
    p = subprocess.run(["psql", "-X", "--csv", "-P", "null=\\N", "-v", "ON_ERROR_STOP=1",
                        "-U", role, "-c", sql], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"as {role}: {p.stderr.strip()}\n{sql}")
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    return [{k: (None if v == "\\N" else v) for k, v in r.items()} for r in rows]


def same(got, want):
    if want is None or got is None:
        return got is None and want is None
    if isinstance(want, bool):
        return got == ("t" if want else "f")
    if isinstance(want, (int, float)):
        g = float(got)
        return math.isclose(g, want, rel_tol=1e-9, abs_tol=1e-12)
    return got == str(want)


def compare(where, got_rows, want_rows, columns):
    if len(got_rows) != len(want_rows):
        fail(f"{where}: {len(got_rows)} rows, want {len(want_rows)}: got {got_rows}, want {want_rows}")
        return
    for i, (g, w) in enumerate(zip(got_rows, want_rows)):
        for c in columns:
            if c not in g:
                fail(f"{where}: no column {c}")
                return
            if not same(g[c], w[c]):
                fail(f"{where}: row {i} {c} = {g[c]}, want {w[c]} (row {g})")
                return


def total(values):
    values = [v for v in values if v is not None]
    return sum(values) if values else None


def bucket(t):
    s = grafana_expand.interval_seconds(INTERVAL)
    return math.floor(t / s) * s


# -- panels ---------------------------------------------------------------

def in_range(jobs):
    return [j for j in jobs if RANGE[0] <= j["accounted_at"] <= RANGE[1]]


def p_totals(jobs):
    return [{"jobs": len(jobs), "energy_kwh": total(j["energy_kwh"] for j in jobs),
             "emissions_kg": total(j["emissions_kg"] for j in jobs),
             "cpu_hours_alloc": total(j["cpu_hours_alloc"] for j in jobs),
             "gpu_hours": total(j["gpu_hours"] for j in jobs),
             "jobs_without_energy": sum(j["energy_kwh"] is None for j in jobs)}]


def p_cluster_series(column):
    def rows(jobs):
        keys = sorted({(bucket(j["accounted_at"]), j["cluster"]) for j in jobs})
        return [{"time": t, "metric": c,
                 column: total(j[column] for j in jobs
                               if (bucket(j["accounted_at"]), j["cluster"]) == (t, c))}
                for t, c in keys]
    return rows


def p_by(field, label):
    def rows(jobs):
        out = []
        for v in sorted({j[field] for j in jobs}):
            js = [j for j in jobs if j[field] == v]
            eff = [j for j in js if j["cpu_efficiency"] is not None]
            alloc = sum(j["cpu_hours_alloc"] for j in eff)
            out.append({label: v, "jobs": len(js),
                        "energy_kwh": total(j["energy_kwh"] for j in js),
                        "emissions_kg": total(j["emissions_kg"] for j in js),
                        "cpu_hours_alloc": total(j["cpu_hours_alloc"] for j in js),
                        "gpu_hours": total(j["gpu_hours"] for j in js),
                        "cpu_efficiency": (sum(j["cpu_hours_used"] for j in eff) / alloc
                                           if alloc else None)})
        out.sort(key=lambda r: (r["energy_kwh"] is None, -(r["energy_kwh"] or 0), r[label]))
        return out
    return rows


def idle_kwh(j):
    return (j["idle_cpu_mem_kwh"] or 0) + (j["idle_gpu_kwh"] or 0)


def p_wasters(jobs):
    w = [j for j in jobs if (j["idle_cpu_mem_kwh"] or 0) > 0 or (j["idle_gpu_kwh"] or 0) > 0]
    w.sort(key=lambda j: (-idle_kwh(j), j["job_key"]))
    return [dict(j, idle_kwh=idle_kwh(j), user_name=j["user"]) for j in w[:25]]


def p_idle_by_user(jobs):
    out = []
    for u in sorted({j["user"] for j in jobs}):
        js = [j for j in jobs if j["user"] == u and
              (j["idle_cpu_mem_kwh"] is not None or j["idle_gpu_kwh"] is not None)]
        if not js:
            continue
        e = total(j["energy_kwh"] for j in js)
        idle = sum(idle_kwh(j) for j in js)
        out.append({"user_name": u, "jobs": len(js), "idle_kwh": idle,
                    "idle_cpu_mem_kwh": total(j["idle_cpu_mem_kwh"] for j in js),
                    "idle_gpu_kwh": total(j["idle_gpu_kwh"] for j in js),
                    "energy_kwh": e, "idle_share": idle / e if e else None})
    out.sort(key=lambda r: (-r["idle_kwh"], r["user_name"]))
    return out


def p_overask(jobs):
    """Asked for much more than used: the rules of doc/reports.md."""
    def cores(j):
        return (j["nnodes"] == 1 and j["cpus"] >= 2 and j["cpu_efficiency"] is not None
                and j["cpu_efficiency"] <= 0.5)

    def mem(j):
        return j["mem_bytes"] >= 2 * 1024 ** 3 and j["mem_efficiency"] < 0.25

    out = []
    judged = [j for j in jobs if j["elapsed_s"] >= 60]
    for key in sorted({(j["user"], j["account"], j["partition"]) for j in judged}):
        js = [j for j in judged if (j["user"], j["account"], j["partition"]) == key]
        c, m = sum(cores(j) for j in js), sum(mem(j) for j in js)
        if not any(cores(j) or mem(j) for j in js):
            continue
        out.append({"user_name": key[0], "account": key[1], "partition": key[2],
                    "jobs": len(js), "jobs_over_cores": c, "jobs_over_mem": m,
                    "cpu_hours_alloc": total(j["cpu_hours_alloc"] for j in js),
                    "cpu_hours_used": total(j["cpu_hours_used"] for j in js)})
    out.sort(key=lambda r: (-(r["jobs_over_cores"] + r["jobs_over_mem"]),
                            r["user_name"], r["account"], r["partition"]))
    return out


def p_dist(figure, scale, weight, label):
    def rows(jobs):
        out = []
        for tenth in range(10):
            js = [j for j in jobs if j[figure] is not None and
                  min(math.floor(scale(j[figure])), 9) == tenth]
            out.append({label: "90 % and more" if tenth == 9 else f"{tenth * 10}-{tenth * 10 + 10} %",
                        "jobs": len(js), weight: sum(j[weight] for j in js)})
        return out
    return rows


def p_reasons(jobs):
    out = []
    for r in sorted({r for j in jobs for r in j["reasons"]}):
        js = [j for j in jobs if r in j["reasons"]]
        out.append({"reason": r, "jobs": len(js), "energy_kwh": total(j["energy_kwh"] for j in js),
                    "gap_s": sum(j["gap_s"] for j in js)})
    out.sort(key=lambda x: (-x["jobs"], x["reason"]))
    return out


def p_quality_series(jobs):
    out = []
    for t in sorted({bucket(j["accounted_at"]) for j in jobs}):
        js = [j for j in jobs if bucket(j["accounted_at"]) == t]
        out.append({"time": t, "jobs": len(js),
                    "jobs_with_gaps": sum(j["gap_s"] > 0 for j in js),
                    "jobs_without_energy": sum(j["energy_kwh"] is None for j in js),
                    "jobs_missing_nodes": sum(j["nodes_reported"] < j["nnodes"] for j in js)})
    return out


def p_err_series(jobs):
    out = []
    for t in sorted({bucket(j["accounted_at"]) for j in jobs}):
        js = [j for j in jobs if bucket(j["accounted_at"]) == t]
        b = [j["energy_err_j"] / j["total_j"] for j in js
             if j["energy_err_j"] is not None and j["total_j"]]
        out.append({"time": t, "median_bound_pct": 100 * statistics.median(b) if b else None,
                    "jobs_without_bound": sum(j["total_j"] is not None and j["energy_err_j"] is None
                                              for j in js)})
    return out


def p_quality_jobs(jobs):
    js = [dict(j, reasons=", ".join(j["reasons"]), user_name=j["user"])
          for j in jobs if j["reasons"]]
    js.sort(key=lambda j: (-j["gap_s"], j["job_key"]))
    return js[:100]


COLUMNS_BY = ["jobs", "energy_kwh", "emissions_kg", "cpu_hours_alloc", "gpu_hours", "cpu_efficiency"]
RANGE_PANELS = {
    ("ceems-overview", "Totals"): (p_totals, ["jobs", "energy_kwh", "emissions_kg",
                                              "cpu_hours_alloc", "gpu_hours", "jobs_without_energy"]),
    ("ceems-overview", "Energy per cluster (kWh)"): (p_cluster_series("energy_kwh"),
                                                      ["time", "metric", "energy_kwh"]),
    ("ceems-overview", "Emissions per cluster (kg CO2e)"): (p_cluster_series("emissions_kg"),
                                                             ["time", "metric", "emissions_kg"]),
    ("ceems-overview", "By account"): (p_by("account", "account"), ["account"] + COLUMNS_BY),
    ("ceems-overview", "By user"): (p_by("user", "user_name"), ["user_name"] + COLUMNS_BY),
    ("ceems-overview", "By partition"): (p_by("partition", "partition"), ["partition"] + COLUMNS_BY),
    ("ceems-efficiency", "Top idle-allocation wasters (jobs)"):
        (p_wasters, ["job_key", "cluster", "jobid", "user_name", "account", "partition",
                     "idle_kwh", "idle_cpu_mem_kwh", "idle_gpu_kwh", "energy_kwh",
                     "cpu_efficiency", "mem_efficiency", "alloc_gpus", "gpu_util_pct"]),
    ("ceems-efficiency", "Idle allocation by user"):
        (p_idle_by_user, ["user_name", "jobs", "idle_kwh", "idle_cpu_mem_kwh", "idle_gpu_kwh",
                          "energy_kwh", "idle_share"]),
    ("ceems-efficiency", "Asked for much more than used (by user, account, partition)"):
        (p_overask, ["user_name", "account", "partition", "jobs", "jobs_over_cores",
                     "jobs_over_mem", "cpu_hours_alloc", "cpu_hours_used"]),
    ("ceems-efficiency", "CPU efficiency distribution"):
        (p_dist("cpu_efficiency", lambda v: v * 10, "cpu_hours_alloc", "cpu_efficiency"),
         ["cpu_efficiency", "jobs", "cpu_hours_alloc"]),
    ("ceems-efficiency", "GPU utilisation distribution"):
        (p_dist("gpu_util_pct", lambda v: v / 10, "gpu_hours", "gpu_util"),
         ["gpu_util", "jobs", "gpu_hours"]),
    ("ceems-data-quality", "Jobs by data-quality reason"):
        (p_reasons, ["reason", "jobs", "energy_kwh", "gap_s"]),
    ("ceems-data-quality", "Jobs and jobs with incomplete figures"):
        (p_quality_series, ["time", "jobs", "jobs_with_gaps", "jobs_without_energy",
                            "jobs_missing_nodes"]),
    ("ceems-data-quality", "Energy error bound"):
        (p_err_series, ["time", "median_bound_pct", "jobs_without_bound"]),
    ("ceems-data-quality", "Jobs with gaps or absent figures"):
        (p_quality_jobs, ["job_key", "cluster", "jobid", "user_name", "gap_s", "nodes_reported",
                          "nnodes", "package_coverage", "emissions_coverage", "reasons"]),
}


# -- the job dashboard ----------------------------------------------------

def when(t):
    return datetime.datetime.fromtimestamp(t, UTC)


def p_job(job):
    return [dict(job, user_name=job["user"], alloc_cpus=job["cpus"])]


def p_series(columns):
    def rows(job):
        out = []
        for i, n in enumerate(job["nodes"]):
            for s in grafana_data.samples(job, n)["samples"]:
                r = {"time": when(s["t"]), "metric": n["node"],
                     "package_w": s["package_j"] / s["interval_s"],
                     "dram_w": s["dram_j"] / s["interval_s"],
                     "gpu_w": s["gpu_j"] / s["interval_s"] if "gpu_j" in s else None,
                     "node_w": None,
                     "cpu_pct": 100 * s["cpu_s"] / s["interval_s"] / n["cores"],
                     "mem_bytes": s["mem_bytes"], "gpu_util_pct": s.get("gpu_util_pct")}
                out.append({c: r[c] for c in ["time", "metric"] + columns})
        out.sort(key=lambda r: (r["time"], r["metric"]))
        return out
    return rows


def p_work(job):
    """Each node's series bucketed into its marks' 60 s intervals: the work
    marked in it (0 where none) beside the power the series gives."""
    out = []
    if not job.get("series"):
        return out
    for n in job["nodes"]:
        worked = {t: w for t, w in grafana_data.marks(job, n)[0]["intervals"]}
        for s in grafana_data.samples(job, n)["samples"]:
            t = s["t"] // 60 * 60
            energy = total([s["package_j"], s["dram_j"], s.get("gpu_j")])
            out.append({"time": when(t), "metric": f"{n['node']} steps",
                        "work": worked.get(t, 0), "power_w": energy / s["interval_s"]})
    out.sort(key=lambda r: (r["time"], r["metric"]))
    return out


def p_nodes(job):
    out = []
    for n in sorted(job["nodes"], key=lambda n: n["node"]):
        out.append({"node": n["node"], "finalized_by": n["finalized_by"],
                    "alloc_cores": n["cores"], "cpu_s": n.get("cpu_s"),
                    "mem_peak_bytes": n["mem_peak"], "package_j": n.get("package_j"),
                    "dram_j": n.get("dram_j"), "gpu_j": n.get("gpu_j"), "node_j": None,
                    "total_j": total([n.get("package_j"), n.get("dram_j"), n.get("gpu_j")]),
                    "gap_s": n["gap_s"], "lifetime_s": n["elapsed"],
                    "emissions_g": n.get("emissions_g")})
    return out


def p_gpus(job):
    return [{"node": n["node"], "uuid": g["uuid"], "share": g["share"], "energy_j": g["energy_j"],
             "util_pct": g["util"], "mem_peak_bytes": g["mem_peak"], "mem_total_bytes": g["mem_total"]}
            for n in sorted(job["nodes"], key=lambda n: n["node"]) for g in n["gpus"]]


def p_notes(job):
    return [{"node": n["node"], "note_id": o["id"], "text": o["text"], "saving_j": o.get("saving_j")}
            for n in sorted(job["nodes"], key=lambda n: n["node"]) for o in n["notes"]]


JOB_PANELS = {
    "Job": (p_job, ["cluster", "jobid", "user_name", "account", "partition", "elapsed_s",
                    "alloc_cpus", "alloc_gpus", "nnodes", "nodes_reported", "energy_kwh",
                    "emissions_kg", "cpu_efficiency", "mem_efficiency", "gpu_util_pct", "gap_s",
                    "idle_cpu_mem_kwh"]),
    "Power (W)": (p_series(["package_w", "dram_w", "gpu_w", "node_w"]),
                  ["time", "metric", "package_w", "dram_w", "gpu_w", "node_w"]),
    "CPU (% of the allocated cores)": (p_series(["cpu_pct"]), ["time", "metric", "cpu_pct"]),
    "Memory": (p_series(["mem_bytes"]), ["time", "metric", "mem_bytes"]),
    "GPU utilisation (%)": (p_series(["gpu_util_pct"]), ["time", "metric", "gpu_util_pct"]),
    "Work per interval and power": (p_work, ["time", "metric", "work", "power_w"]),
    "Nodes": (p_nodes, ["node", "finalized_by", "alloc_cores", "cpu_s", "mem_peak_bytes",
                        "package_j", "dram_j", "gpu_j", "node_j", "total_j", "gap_s",
                        "lifetime_s", "emissions_g"]),
    "GPUs": (p_gpus, ["node", "uuid", "share", "energy_j", "util_pct", "mem_peak_bytes",
                      "mem_total_bytes"]),
    "Notes": (p_notes, ["node", "note_id", "text", "saving_j"]),
}


# -- running ----------------------------------------------------------------

def load_dashboards(directory):
    out = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith(".json"):
            with open(os.path.join(directory, name)) as f:
                d = json.load(f)
            out[d["uid"]] = d
    return out


def run_panel(role, sql, variables):
    t_from, t_to = when(RANGE[0]), when(RANGE[1])
    rows = run_sql(role, grafana_expand.expand(sql, t_from, t_to, variables))
    for r in rows:         # Grafana reads a timestamptz "time" column as an instant
        if r.get("time") and ":" in r["time"]:
            r["time"] = datetime.datetime.fromisoformat(r["time"] + (":00" if r["time"][-3] in "+-" else ""))
    return rows


def same_time(got_rows):
    for r in got_rows:
        if isinstance(r.get("time"), datetime.datetime):
            r["time"] = r["time"].timestamp()


def compare_rows(where, got, want, columns):
    same_time(got)
    for w in want:
        if isinstance(w.get("time"), datetime.datetime):
            w["time"] = w["time"].timestamp()
    compare(where, got, want, columns)


def visible_to(visibility):
    kind, _, name = visibility.partition(":")
    if kind == "all":
        return lambda j: True
    if kind == "user":
        return lambda j: j["user"] == name
    if kind == "account":
        return lambda j: j["account"] == name
    raise SystemExit(f"visibility {visibility}: all, user:NAME or account:NAME")


def check_range_dashboards(dashboards, role, jobs):
    for clusters in (["c1", "c2"], ["c2"]):
        chosen = [j for j in in_range(jobs) if j["cluster"] in clusters]
        variables = {"cluster": (clusters, True), "__interval": (INTERVAL, False)}
        for uid in ("ceems-overview", "ceems-efficiency", "ceems-data-quality"):
            for p in dashboards[uid]["panels"]:
                key = (uid, p["title"])
                if key not in RANGE_PANELS:
                    fail(f"{uid}: panel {p['title']!r} has no check")
                    continue
                expect, columns = RANGE_PANELS[key]
                got = run_panel(role, p["targets"][0]["rawSql"], variables)
                compare_rows(f"{uid} / {p['title']} as {role}, clusters {clusters}",
                             got, expect(chosen), columns)
            for v in dashboards[uid]["templating"]["list"]:
                if v["type"] == "query":
                    got = run_panel(role, v["query"], {})
                    want = [{"name": c} for c in sorted({j["cluster"] for j in grafana_data.make_jobs()})]
                    compare(f"{uid} variable {v['name']} as {role}", got, want, ["name"])


def check_job_dashboard(dashboard, role, jobs, all_jobs):
    var = [v for v in dashboard["templating"]["list"] if v["name"] == "job"][0]
    got = run_panel(role, var["query"], {})
    listed = sorted(in_range(jobs), key=lambda j: (-j["accounted_at"], j["job_key"]))[:1000]
    want = [{"__value": j["job_key"],
             "__text": f"{j['cluster']} {j['jobid']} {j['user']} "
                       f"{when(j['accounted_at']).strftime('%Y-%m-%d %H:%M')}"} for j in listed]
    compare(f"ceems-job variable job as {role}", got, want, ["__value", "__text"])
    shown = [j for j in listed if j.get("series")]
    hidden = [j for j in in_range(all_jobs) if j.get("series") and
              j["job_key"] not in {x["job_key"] for x in jobs}]
    if not shown:
        fail(f"ceems-job as {role}: no job with series to show")
    for job in shown[:4] + hidden[:2]:
        variables = {"job": (str(job["job_key"]), False)}
        for p in dashboard["panels"]:
            if p["title"] not in JOB_PANELS:
                fail(f"ceems-job: panel {p['title']!r} has no check")
                continue
            expect, columns = JOB_PANELS[p["title"]]
            want = expect(job) if job in shown else []
            got = run_panel(role, p["targets"][0]["rawSql"], variables)
            compare_rows(f"ceems-job / {p['title']} job {job['jobid']} as {role}", got, want, columns)


def check(directory, workdir, role, visibility):
    with open(os.path.join(workdir, "jobs.json")) as f:
        stored = json.load(f)
    keys = {(r["name"], int(r["jobid"])): int(r["job_key"]) for r in run_sql(
        os.environ.get("PGUSER", "postgres"),
        "SELECT j.job_key, c.name, j.jobid FROM ceems.jobs j JOIN ceems.clusters c USING (cluster_id)")}
    all_jobs = []
    for job in stored:
        f = grafana_data.figures(job)
        f["job_key"] = keys[(job["cluster"], job["jobid"])]
        all_jobs.append(f)
    jobs = [j for j in all_jobs if visible_to(visibility)(j)]
    dashboards = load_dashboards(directory)
    check_range_dashboards(dashboards, role, jobs)
    check_job_dashboard(dashboards["ceems-job"], role, jobs, all_jobs)
    print(f"{role}: {len(jobs)} jobs visible, {len(in_range(jobs))} in the range")


# -- validity -------------------------------------------------------------

DS = {"type": "grafana-postgresql-datasource", "uid": "${datasource}"}
PANEL_TYPES = {"timeseries", "table", "stat", "barchart"}


def validate_dashboard(name, d):
    where = f"{name}"
    for key, kind in (("uid", str), ("title", str), ("schemaVersion", int), ("panels", list),
                      ("templating", dict), ("time", dict)):
        if not isinstance(d.get(key), kind):
            fail(f"{where}: {key} missing or not a {kind.__name__}")
            return
    if not 36 <= d["schemaVersion"] <= 41:
        fail(f"{where}: schemaVersion {d['schemaVersion']} is not Grafana 10/11's")
    if not 0 < len(d["uid"]) <= 40:
        fail(f"{where}: uid longer than Grafana's 40 characters")
    variables = d["templating"].get("list", [])
    dsvars = [v for v in variables if v.get("name") == "datasource"]
    if len(dsvars) != 1 or dsvars[0].get("type") != "datasource" or \
            dsvars[0].get("query") != "grafana-postgresql-datasource":
        fail(f"{where}: no variable datasource of type datasource for grafana-postgresql-datasource")
    for v in variables:
        if v.get("type") == "query" and (v.get("datasource") != DS or not v.get("query") or
                                         v.get("definition") != v.get("query")):
            fail(f"{where}: variable {v.get('name')}: not a query on ${{datasource}}")
    ids = set()
    for p in d["panels"]:
        pw = f"{where} panel {p.get('id')} {p.get('title')!r}"
        if not isinstance(p.get("id"), int) or p["id"] in ids:
            fail(f"{pw}: id missing or repeated")
        ids.add(p.get("id"))
        if p.get("type") not in PANEL_TYPES or not p.get("title"):
            fail(f"{pw}: type or title")
        g = p.get("gridPos", {})
        if not all(isinstance(g.get(k), int) for k in "xywh") or g["x"] + g["w"] > 24:
            fail(f"{pw}: gridPos {g}")
        if p.get("datasource") != DS:
            fail(f"{pw}: datasource is not the variable's")
        targets = p.get("targets")
        if not isinstance(targets, list) or len(targets) != 1:
            fail(f"{pw}: one target expected")
            continue
        t = targets[0]
        if t.get("datasource") != DS or t.get("refId") != "A" or t.get("rawQuery") is not True or \
                t.get("editorMode") != "code" or not isinstance(t.get("rawSql"), str):
            fail(f"{pw}: target is not raw SQL on the variable's data source")
        if t.get("format") not in ("table", "time_series"):
            fail(f"{pw}: format {t.get('format')}")
        if (t.get("format") == "time_series") != (p.get("type") == "timeseries"):
            fail(f"{pw}: a time series panel wants format time_series, and only it")
        if t.get("format") == "time_series" and (
                ('AS "time"' not in t["rawSql"] and "$__timeGroupAlias(" not in t["rawSql"]) or
                "ORDER BY 1" not in t["rawSql"]):
            fail(f"{pw}: a time series needs a \"time\" column and rows in time order")


def validate(directory):
    names = sorted(n for n in os.listdir(directory) if n.endswith(".json"))
    if not names:
        fail(f"{directory}: no dashboards")
    for name in names:
        with open(os.path.join(directory, name)) as f:
            try:
                d = json.load(f)
            except json.JSONDecodeError as e:
                fail(f"{name}: not JSON: {e}")
                continue
        validate_dashboard(name, d)
        if d.get("uid") and name != d["uid"] + ".json":
            fail(f"{name}: file name is not its uid")
    prov = os.path.join(directory, "provisioning")
    for name, needed in (("datasources/ceems.yaml", ["apiVersion: 1", "type: grafana-postgresql-datasource",
                                                     "database: ceems", "user: grafana"]),
                         ("dashboards/ceems.yaml", ["apiVersion: 1", "type: file", "path: "])):
        try:
            with open(os.path.join(prov, name)) as f:
                text = f.read()
        except OSError as e:
            fail(f"provisioning/{name}: {e}")
            continue
        if "\t" in text:
            fail(f"provisioning/{name}: a tab (YAML indents with spaces)")
        for n in needed:
            if n not in text:
                fail(f"provisioning/{name}: no {n!r}")


def main(argv):
    if len(argv) == 3 and argv[1] == "validate":
        validate(argv[2])
    elif len(argv) == 2 and argv[1] == "expand-selftest":
        grafana_expand.selftest()
    elif len(argv) == 5 and argv[1] == "store":
        jobs = grafana_data.store(argv[2], argv[3], argv[4])
        print(f"stored {len(jobs)} jobs")
    elif len(argv) == 6 and argv[1] == "check":
        check(argv[2], argv[3], argv[4], argv[5])
    else:
        sys.stderr.write(__doc__)
        return 2
    for f in FAILURES:
        print("FAILED: " + f)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
