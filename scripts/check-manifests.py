#!/usr/bin/env python3
"""Checks the Kubernetes manifests of deploy/kubernetes without a cluster (kubectl's
client-side dry run still asks a server for the API list; none is here).

    scripts/check-manifests.py [SYSMETER]

Each document must parse as YAML and have the fields its kind requires (apiVersion, kind,
metadata.name, the namespace of the others, a DaemonSet's selector matching its pod
labels, a CronJob's schedule of five fields, a container's name and image); every secret a
container reads must be a key of a Secret defined there; no container that benches has a
CPU limit (a CFS quota would throttle the measuring thread); and with SYSMETER (a sysmeter
binary) every container's arguments are parsed by it: the subcommand and its flags must
exist. Prints one line per problem and exits 1, or prints what it checked and exits 0.
"""

import subprocess
import sys
from pathlib import Path

import yaml

KINDS = {
    ("v1", "Namespace"),
    ("v1", "Secret"),
    ("apps/v1", "DaemonSet"),
    ("batch/v1", "CronJob"),
}


def pod_spec(doc):
    kind = doc["kind"]
    if kind == "DaemonSet":
        return doc["spec"]["template"]["spec"]
    if kind == "CronJob":
        return doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return None


def check_args(sysmeter, args, where, problems):
    """The subcommand must exist and list every flag given in its `--help`."""
    out = subprocess.run([sysmeter, args[0], "--help"], capture_output=True, text=True)
    if out.returncode != 0:
        problems.append(f"{where}: `sysmeter {args[0]}` is not a subcommand")
        return
    flags = [a.split("=")[0] for a in args[1:] if a.startswith("--")]
    for flag in flags:
        if flag not in out.stdout:
            problems.append(f"{where}: `sysmeter {args[0]}` has no flag {flag}")


def main():
    root = Path(__file__).resolve().parent.parent / "deploy" / "kubernetes"
    sysmeter = sys.argv[1] if len(sys.argv) > 1 else None
    problems, docs = [], []
    for path in sorted(root.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                docs.append((path.name, doc))
    secrets = {
        d["metadata"]["name"]: set(d.get("stringData", {})) | set(d.get("data", {}))
        for _, d in docs
        if d.get("kind") == "Secret"
    }
    containers = 0
    for name, doc in docs:
        where = f"{name} ({doc.get('kind')} {doc.get('metadata', {}).get('name')})"
        if (doc.get("apiVersion"), doc.get("kind")) not in KINDS:
            problems.append(f"{where}: unknown apiVersion/kind")
            continue
        if not doc.get("metadata", {}).get("name"):
            problems.append(f"{where}: no metadata.name")
        if doc["kind"] != "Namespace" and doc["metadata"].get("namespace") != "sysmeter":
            problems.append(f"{where}: not in the sysmeter namespace")
        if doc["kind"] == "DaemonSet":
            labels = doc["spec"]["template"]["metadata"]["labels"]
            wanted = doc["spec"]["selector"]["matchLabels"]
            if any(labels.get(k) != v for k, v in wanted.items()):
                problems.append(f"{where}: the selector does not match the pod labels")
        if doc["kind"] == "CronJob" and len(doc["spec"]["schedule"].split()) != 5:
            problems.append(f"{where}: the schedule is not five fields")
        spec = pod_spec(doc)
        if spec is None:
            continue
        for c in spec.get("initContainers", []) + spec["containers"]:
            containers += 1
            cw = f"{where} container {c.get('name')}"
            if not c.get("name") or not c.get("image"):
                problems.append(f"{cw}: no name or image")
            for env in c.get("env", []):
                ref = env.get("valueFrom", {}).get("secretKeyRef")
                if ref and ref["key"] not in secrets.get(ref["name"], set()):
                    problems.append(f"{cw}: secret {ref['name']} has no key {ref['key']}")
            args = c.get("args", [])
            if args and args[0] == "bench" and "cpu" in c.get("resources", {}).get("limits", {}):
                problems.append(f"{cw}: a CPU limit throttles the bench")
            if sysmeter and args:
                check_args(sysmeter, args, cw, problems)
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(f"{len(docs)} documents, {containers} containers: fine")


main()
