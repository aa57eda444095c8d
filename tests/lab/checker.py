"""The lab's checker, in the spirit of Jepsen: reads what the clients were
told (acknowledgements), what the nodes ran (every rank start, from the
lines the job script appends per node) and what etcd applied (the watch of
the prefix), and checks the properties the cluster promises:

  acked_jobs_not_lost   every acknowledged job ran and ended COMPLETED
  job_ids_unique        no job id given to two submissions (two tags)
  ranks_once_per_attempt no (job, attempt, rank) started twice
  one_writer_in_etcd    no log index written twice (two controllers
                        appending means two leaders acted)
  no_healthy_node_drained no node drained at the end
  ranks_as_submitter    every rank ran as the uid that submitted its job

Pure functions of the recorded files: run it again on a kept lab dir.
"""

import base64
import collections
import json
import os


def read_rank_starts(ranks_dir):
    starts = []
    for name in sorted(os.listdir(ranks_dir)):
        with open(os.path.join(ranks_dir, name)) as lines:
            for line in lines:
                fields = line.split()
                if len(fields) != 7:
                    continue
                host, job_id, attempt, rank, uid, tag, when = fields
                starts.append({"host": host, "job_id": int(job_id),
                               "attempt": int(attempt), "rank": int(rank),
                               "uid": int(uid), "tag": tag,
                               "time": float(when)})
    return starts


def read_etcd_puts(history_path, prefix):
    """(key, version, mod_revision) of every PUT under PREFIX/log/."""
    puts = []
    log_prefix = prefix.rstrip("/") + "/log/"
    with open(history_path, errors="replace") as lines:
        for line in lines:
            try:
                response = json.loads(line)
            except ValueError:
                continue
            for event in response.get("Events") or []:
                kv = event.get("kv", {})
                key = base64.b64decode(kv.get("key", "")).decode(errors="replace")
                if event.get("type", "PUT") == "PUT" and key.startswith(log_prefix):
                    puts.append((key, int(kv.get("version", 1)),
                                 int(kv.get("mod_revision", 0))))
    return puts


def check(acks, starts, final_jobs, nodes, etcd_puts, excused_drains=()):
    """{property: list of violations} (empty lists: it holds) and counts.
    excused_drains: nodes the faults cut from the controllers, which
    gantryd drains by design when they go silent under a job (docs/user-guide.md,
    "When things fail"); they are counted, not violations."""
    violations = collections.defaultdict(list)
    acked = [a for a in acks if a["job_id"] is not None]
    by_tag = {a["tag"]: a for a in acks}
    tags_of_job = collections.defaultdict(set)
    for ack in acked:
        tags_of_job[ack["job_id"]].add(ack["tag"])
    for start in starts:
        tags_of_job[start["job_id"]].add(start["tag"])
    for job_id, tags in tags_of_job.items():
        if len(tags) > 1:
            violations["job_ids_unique"].append(f"job {job_id}: tags {sorted(tags)}")
    ran_tags = {s["tag"] for s in starts}
    for ack in acked:
        state = (final_jobs.get(ack["job_id"]) or {}).get("state")
        if ack["tag"] not in ran_tags or state != "COMPLETED":
            violations["acked_jobs_not_lost"].append(
                f"job {ack['job_id']} (tag {ack['tag']}): state {state}, "
                f"ran: {ack['tag'] in ran_tags}")
    per_rank = collections.Counter(
        (s["job_id"], s["attempt"], s["rank"]) for s in starts)
    for key, count in per_rank.items():
        if count > 1:
            violations["ranks_once_per_attempt"].append(
                f"job {key[0]} attempt {key[1]} rank {key[2]}: {count} starts")
    seen = collections.Counter(key for key, _, _ in etcd_puts)
    for key, count in seen.items():
        if count > 1:
            violations["one_writer_in_etcd"].append(f"{key} written {count} times")
    excused = 0
    for name, node in nodes.items():
        if node.get("drained") and name in excused_drains:
            excused += 1
        elif node.get("drained"):
            violations["no_healthy_node_drained"].append(
                f"{name}: {node.get('drain_reason', '')}")
    for start in starts:
        ack = by_tag.get(start["tag"])
        if ack is None or ack["uid"] != start["uid"]:
            violations["ranks_as_submitter"].append(
                f"job {start['job_id']} rank {start['rank']} ran as uid "
                f"{start['uid']}, submitted by "
                f"{ack['uid'] if ack else 'no client of the lab'}")
    counts = {
        "submissions": len(acks),
        "acks": len(acked),
        "unacknowledged": len(acks) - len(acked),
        "unacknowledged_that_ran": len({a["tag"] for a in acks
                                        if a["job_id"] is None} & ran_tags),
        "rank_starts": len(starts),
        "etcd_log_puts": len(etcd_puts),
        "drained_after_a_cut": excused,
    }
    properties = ("acked_jobs_not_lost", "job_ids_unique",
                  "ranks_once_per_attempt", "one_writer_in_etcd",
                  "no_healthy_node_drained", "ranks_as_submitter")
    return {p: violations.get(p, []) for p in properties}, counts


def report(verdicts, counts, faults):
    lines = ["counts: " + ", ".join(f"{k} {v}" for k, v in counts.items()),
             f"faults injected: {len(faults)}"]
    lines += [f"  {what}" for _, what in faults]
    for prop, found in verdicts.items():
        lines.append(f"{prop}: {'holds' if not found else 'VIOLATED'}")
        lines += [f"  {v}" for v in found[:10]]
    return "\n".join(lines)
