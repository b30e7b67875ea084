"""grafana_data.py - the jobs the dashboards' tests store, and what each
job's figures must be, for tests/integration/grafana.bats.

make_jobs() draws a fixed set of jobs (a seeded generator: the same set
at every run) over two clusters, three users, two accounts and two
partitions, with the cases the dashboards must show: idle cores, memory
and GPUs, gaps, a node that sent no record, domains not measured, a
record the node agent ended, no emission factor, and jobs ending on the
time range's ends and outside it.  store() turns each node of each job
into a record with tests/integration/record-gen (the library's own
encoder) and stores them all in one ceems.upsert_job_records() as the
writer role, then the series of some jobs with ceems.add_job_samples().

figures() computes, from what was generated (never from the database),
the job-wide figures as doc/storage.md and the views define them: the
expected side of every panel check.
"""

import json
import os
import random
import subprocess

T0 = 1700006400                 # 2023-11-15 00:00 UTC
USERS = {"alice": 1001, "bob": 1002, "erin": 1003}
GIB = 1 << 30


def _node(rng, job, name, cores, i):
    elapsed = job["end"] - job["start"]
    eff = rng.choice([0.05, 0.15, 0.25, 0.45, 0.65, 0.85, 0.95, 1.25])
    n = {"node": name, "cores": cores, "elapsed": elapsed,
         "cpu_s": round(eff * elapsed * cores),
         "mem_peak": rng.randint(1, 8) * GIB // 4,
         "gap_s": 0, "finalized_by": "extern", "gpus": []}
    if not job.get("no_package"):
        n["package_j"] = rng.randint(100, 900) * elapsed // 10
        n["package_static_j"] = n["package_j"] * rng.randint(1, 5) // 10
    if rng.random() < 0.7:
        n["dram_j"] = rng.randint(10, 90) * elapsed // 10
        n["dram_static_j"] = n["dram_j"] // 4
    if not job.get("no_zone"):
        n["zone"] = "FR"
        n["emissions_g"] = rng.randint(1, 500)
    for g in range(job["gpus_per_node"]):
        util = rng.choice([0.0, 0.5, 12.0, 35.0, 55.0, 75.0, 95.0, None])
        n["gpus"].append({"uuid": f"GPU-{job['jobid']}-{i}-{g}", "bus": f"0000:{g + 1:02x}:00.0",
                          "share": 1.0, "energy_j": float(rng.randint(1000, 90000)),
                          "util": util, "mem_peak": rng.randint(1, 40) * GIB,
                          "mem_total": 80 * GIB})
    if n["gpus"]:
        n["gpu_j"] = sum(g["energy_j"] for g in n["gpus"])
    return n


def make_jobs():
    rng = random.Random(20231115)
    jobs = []
    for k in range(40):
        user = ["alice", "bob", "erin"][k % 3]
        start = T0 + rng.randint(0, 4 * 86400 - 7200)
        job = {"cluster": "c1" if k % 4 else "c2", "jobid": 1000 + k, "user": user,
               "uid": USERS[user], "account": "chem" if k % 5 in (1, 3) else "phys",
               "partition": "gpu" if k % 6 == 0 else "cpu",
               "start": start, "end": start + rng.randint(600, 7000),
               "nnodes": 1 + (k % 7 == 2), "gpus_per_node": 0}
        if job["partition"] == "gpu":
            job["gpus_per_node"] = 1 + k % 2
        job["no_package"] = k % 11 == 5
        job["no_zone"] = k % 13 == 4
        jobs.append(job)
    # on the test range's ends (grafana.bats: T0 + 1 d to T0 + 3 d)
    jobs[7]["end"] = T0 + 86400
    jobs[7]["start"] = jobs[7]["end"] - 3600
    jobs[8]["end"] = T0 + 3 * 86400
    jobs[8]["start"] = jobs[8]["end"] - 5400
    # the data-quality cases below, and GPU jobs, inside the range
    for k in (3, 9, 10, 12, 16, 17, 20, 25, 30):
        jobs[k]["start"] = T0 + 86400 + 3000 * k
        jobs[k]["end"] = jobs[k]["start"] + 2400
    for job in jobs:
        cores = 4 * (1 + job["jobid"] % 4)
        job["cpus"] = cores * job["nnodes"]
        job["mem_bytes"] = 16 * GIB * job["nnodes"]
        job["nodes"] = [_node(rng, job, f"{job['cluster']}n{(job['jobid'] + i) % 9:02d}", cores, i)
                        for i in range(job["nnodes"])]
    # data-quality cases, each on a job of its own
    jobs[3]["nodes"][0]["gap_s"] = 120
    jobs[9]["nodes"][0]["gap_s"] = 30
    jobs[9]["nodes"][0]["covered_s"] = jobs[9]["nodes"][0]["elapsed"] - 30
    jobs[16]["nodes"].pop()                     # a node sent no record
    jobs[10]["nodes"][0]["finalized_by"] = "agent"
    jobs[20]["nodes"][0]["covered_s"] = jobs[20]["nodes"][0]["elapsed"] / 2
    jobs[25]["nodes"][0].pop("cpu_s")
    for g in jobs[12]["nodes"][0]["gpus"]:
        g["util"] = None                        # the driver gave no utilisation
    jobs[7]["nodes"][0]["no_err"] = True        # its agent restarted: no bound
    return jobs


def err_parts(n):
    """The node's energy error bound per domain (source, lag, idle
    power, gaps, J), whole numbers drawn from its energy; none when its
    agent could not tell one."""
    if n.get("no_err"):
        return {}
    out = {}
    if "package_j" in n:
        out["package"] = (n["package_j"] // 1000 + 1, 0, n["package_j"] // 100, 0)
    if "dram_j" in n:
        out["dram"] = (1, 0, 0, n["dram_j"] // 50)
    if "gpu_j" in n:
        out["gpu"] = (n["gpu_j"] // 40, n["gpu_j"] // 100, 0, 0)
    return out


def record_args(job, n):
    a = [f"cluster={job['cluster']}", f"jobid={job['jobid']}", f"uid={job['uid']}",
         f"user={job['user']}", f"account={job['account']}", f"partition={job['partition']}",
         "state=COMPLETED", "exit=0", f"submit={job['start'] - 60}", f"start={job['start']}",
         f"end={job['end']}", f"cpus={job['cpus']}", f"nnodes={job['nnodes']}",
         f"mem_bytes={job['mem_bytes']}", f"node={n['node']}", f"cores={n['cores']}",
         f"elapsed={n['elapsed']}", f"mem_peak={n['mem_peak']}", f"gap_s={n['gap_s']}",
         f"finalized_by={n['finalized_by']}", f"written_at={job['end'] + 10}", "steps=2"]
    if job["gpus_per_node"]:
        a.append(f"alloc_gpus={job['gpus_per_node'] * job['nnodes']}")
    for key in ("cpu_s", "package_j", "package_static_j", "dram_j", "dram_static_j",
                "gpu_j", "covered_s", "emissions_g", "zone"):
        if key in n:
            a.append(f"{key}={n[key]}")
    for d, p in err_parts(n).items():
        a.append(f"err={d},{p[0]},{p[1]},{p[2]},{p[3]}")
    for g in n["gpus"]:
        util = "-" if g["util"] is None else g["util"]
        a.append(f"gpu={g['uuid']},{g['bus']},-,{g['share']},{g['energy_j']},{util},"
                 f"{g['mem_peak']},{g['mem_total']},-,1")
    return a


def samples(job, n):
    """Ten 60 s samples from the job's start on node N."""
    rows = []
    for i in range(10):
        s = {"t": job["start"] + 60 * i, "interval_s": 60, "cpu_s": 30 * (i + 1),
             "mem_bytes": (i + 1) * 1000000, "package_j": 600 + 60 * i,
             "dram_j": 120 + i}
        if n["gpus"]:
            s["gpu_j"] = 1200 + 10 * i
            s["gpu_util_pct"] = None if i == 4 else 10 * i
        rows.append(s)
    return {"cluster": job["cluster"], "jobid": job["jobid"], "start_time": job["start"],
            "node": n["node"], "resolution_s": 60, "samples": rows}


def marks(job, n):
    """The work a job with a series marked on node N: 100 (i + 1) steps in
    every other of its series' 60 s intervals, none in the others."""
    t0 = job["start"] // 60 * 60
    rows = [[t0 + 60 * i, 100 * (i + 1)] for i in range(0, 10, 2)]
    return [{"name": "steps", "unit": "timesteps", "work": sum(r[1] for r in rows),
             "marks": len(rows), "interval_s": 60, "intervals": rows}]


def _psql_file(role, path):
    subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-U", role, "-f", path],
                   check=True, stdout=subprocess.DEVNULL)


def store(record_gen, workdir, writer):
    """Generate, store as WRITER; keep jobs.json in WORKDIR for the checks."""
    jobs = make_jobs()
    records = []
    for job in jobs:
        for n in job["nodes"]:
            out = subprocess.run([record_gen] + record_args(job, n), check=True,
                                 stdout=subprocess.PIPE, text=True).stdout
            rec = json.loads(out)
            if job["jobid"] % 2 == 0:      # the jobs with a series (below)
                rec["marks"] = marks(job, n)
            n["notes"] = rec.get("notes", [])
            records.append(rec)
    path = os.path.join(workdir, "records.json")
    with open(path, "w") as f:
        json.dump(records, f)
    script = os.path.join(workdir, "store.sql")
    with open(script, "w") as f:
        f.write(f"\\set recs `cat {path}`\nSELECT ceems.upsert_job_records(:'recs'::jsonb);\n")
        for job in jobs:
            if job["jobid"] % 2 != 0:
                continue
            job["series"] = True
            for i, n in enumerate(job["nodes"]):
                p = os.path.join(workdir, f"samples-{job['jobid']}-{i}.json")
                with open(p, "w") as s:
                    json.dump(samples(job, n), s)
                f.write(f"\\set s `cat {p}`\nSELECT ceems.add_job_samples(:'s'::jsonb);\n")
    _psql_file(writer, script)
    with open(os.path.join(workdir, "jobs.json"), "w") as f:
        json.dump(jobs, f)
    return jobs


def _sum(values):
    values = [v for v in values if v is not None]
    return sum(values) if values else None


def figures(job):
    """The job's row of ceems.job_usage (and of jobs), from what was generated."""
    nodes = job["nodes"]
    f = dict(job)
    elapsed = job["end"] - job["start"]
    f["accounted_at"] = job["end"]
    f["elapsed_s"] = elapsed
    f["nodes_reported"] = len(nodes)
    node_totals = [_sum([n.get("package_j"), n.get("dram_j"), n.get("gpu_j")]) for n in nodes]
    total = _sum(node_totals)
    f["energy_kwh"] = None if total is None else total / 3.6e6
    f["total_j"] = total
    # The bound of each node with energy; the job's when every one has it.
    bounds = [sum(map(sum, err_parts(n).values())) if err_parts(n) else None
              for n, t in zip(nodes, node_totals) if t is not None]
    f["energy_err_j"] = (sum(bounds) if bounds and None not in bounds else None)
    em = _sum([n.get("emissions_g") for n in nodes])
    f["emissions_kg"] = None if em is None else em / 1000
    f["cpu_time_s"] = _sum([n.get("cpu_s") for n in nodes])
    f["cpu_hours_alloc"] = job["cpus"] * elapsed / 3600
    f["cpu_hours_used"] = None if f["cpu_time_s"] is None else f["cpu_time_s"] / 3600
    f["cpu_efficiency"] = (None if f["cpu_time_s"] is None
                           else f["cpu_time_s"] / (elapsed * job["cpus"]))
    f["mem_efficiency"] = sum(n["mem_peak"] for n in nodes) / job["mem_bytes"]
    f["alloc_gpus"] = job["gpus_per_node"] * job["nnodes"] or None
    f["gpu_hours"] = (f["alloc_gpus"] or 0) * elapsed / 3600
    gpus = [g for n in nodes for g in n["gpus"]]
    util = [g for g in gpus if g["util"] is not None]
    f["gpu_util_pct"] = (sum(g["util"] * g["share"] for g in util) / sum(g["share"] for g in util)
                         if util else None)
    idle_gpu = [g["energy_j"] for g in gpus if g["util"] is not None and g["util"] < 1]
    f["idle_gpu_kwh"] = sum(idle_gpu) / 3.6e6 if idle_gpu else None
    pst = _sum([n.get("package_static_j") for n in nodes])
    dst = _sum([n.get("dram_static_j") for n in nodes])
    ce, me = f["cpu_efficiency"], f["mem_efficiency"]
    idle_cpu = None if pst is None or ce is None else pst * (1 - min(ce, 1))
    idle_mem = None if dst is None else dst * (1 - min(me, 1))
    known = idle_cpu is not None or idle_mem is not None
    f["idle_cpu_mem_kwh"] = ((idle_cpu or 0) + (idle_mem or 0)) / 3.6e6 if known else None
    f["gap_s"] = sum(n["gap_s"] for n in nodes)
    lifetime = sum(n["elapsed"] for n in nodes)
    f["package_j"] = _sum([n.get("package_j") for n in nodes])
    covered = sum(n.get("covered_s", n["elapsed"]) for n in nodes if "package_j" in n)
    f["package_coverage"] = covered / lifetime if f["package_j"] is not None else None
    f["dram_j"] = _sum([n.get("dram_j") for n in nodes])
    f["emissions_coverage"] = (None if em is None else
                               sum(n["elapsed"] for n in nodes if "emissions_g" in n) / lifetime)
    f["reasons"] = sorted(reasons(f, job))
    return f


def reasons(f, job):
    """The data-quality dashboard's reasons that hold for the job."""
    r = []
    if f["gap_s"] > 0:
        r.append("time not accounted (gap)")
    if f["nodes_reported"] < job["nnodes"]:
        r.append("node records missing")
    if any(n["finalized_by"] == "agent" for n in job["nodes"]):
        r.append("ended by the node agent")
    if f["cpu_time_s"] is None:
        r.append("CPU time not measured")
    if f["package_j"] is None:
        r.append("CPU energy not measured")
    elif f["package_coverage"] < 1:
        r.append("CPU energy partly measured")
    if f["dram_j"] is None:
        r.append("memory energy not measured")
    if f["alloc_gpus"] and f["gpu_util_pct"] is None:
        r.append("GPU utilisation not measured")
    if f["emissions_kg"] is None:
        r.append("no emission factor")
    elif f["emissions_coverage"] < 1:
        r.append("emission factor partly known")
    return r
