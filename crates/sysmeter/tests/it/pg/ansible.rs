//! The Ansible deployment of docs/fleet.md end to end (issue 30): three hosts that are
//! network namespaces, each with its own sshd and UTS host name (`support::ssh_hosts`) and
//! in a cgroup of ten times the default CPU weight, one of them limited to 1 ms of CPU per
//! 10 ms (`support::cpu_limit`: v1 `cpu.cfs_quota_us` or v2 `cpu.max`);
//! `ansible-playbook deploy/ansible/playbook.yml` with the binary under test installs
//! sysmeter on each over ssh, benches `os.task` (quick profile), fetches the records and
//! imports them into a real PostgreSQL on the controller (`support::pg`). `sysmeter fleet`
//! must then name the slowed host as the outlier in the spawn metrics, no other host, and
//! each host's run must carry its own UTS host name.
//!
//! Why those metrics: a CPU quota is enforced at the scheduler tick (4 ms at 250 Hz), so a
//! process runs for a tick or more and then waits out the rest of the periods it used up.
//! Samples much shorter than that (most of the bench's: ~1 ms) mostly fall between two
//! throttles and their medians do not move (measured: 0.5–1.2× in `cpu.loop` and
//! `os.syscall`). One `posix_spawn`/`fork+exec` of /bin/true and its wait is a sample of its
//! own, switches processes and costs ~1 ms of CPU, so every sample waits for a new period:
//! ~10–12× slower (docs/fleet.md, "The Ansible test"). Needs root, `ansible-playbook`
//! (capability `ansible`), OpenSSH (`sshd`), network namespaces, a CPU cgroup and PostgreSQL.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::cpu_limit::CpuLimit;
use crate::support::needs::root;
use crate::support::pg::test_db;
use crate::support::skip::{Cap, Missing};
use crate::support::ssh_hosts::{SshHost, keygen, openssh};
use crate::support::{exclusive, json_out, need, sysmeter};

/// The UTS host names; the second is slowed.
const NAMES: [&str; 3] = ["ns-alpha", "ns-beta", "ns-gamma"];
const SLOWED: usize = 1;
/// Its CPU limit: 1 ms of CPU time per 10 ms.
const QUOTA: (u64, u64) = (1_000, 10_000);
/// Every host's CPU weight, in multiples of the default: the machine's other work (other
/// tests, `stress-ng`) then barely moves an unslowed host's medians, which with three
/// hosts decide how far the slowed one must be to count as an outlier.
const WEIGHT: u64 = 10;
/// The metrics the CPU limit moves (module documentation), as a `fleet --metric` pattern.
const SPAWN_METRICS: &str = "os.task/*/bin/true*";

fn ansible_playbook() -> Result<(), Missing> {
    match Command::new("ansible-playbook").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(Missing::new(
            Cap::Ansible,
            format!("ansible-playbook --version failed: {o:?}"),
        )),
        Err(e) => Err(Missing::new(
            Cap::Ansible,
            format!("no ansible-playbook ({e}); apt-get install ansible"),
        )),
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}

#[test]
fn ansible_benches_three_sshd_hosts_and_fleet_names_the_slowed_one() {
    need!(root("make network namespaces, sshd servers and a cgroup"));
    need!(ansible_playbook());
    need!(openssh());
    let db = need!(test_db());
    let dir = tempfile::tempdir().expect("tempdir");
    let dir = dir.path();
    let client_key = dir.join("id");
    let authorized = dir.join("authorized_keys");
    std::fs::write(&authorized, keygen(&client_key)).expect("authorized_keys");
    let mut hosts = Vec::new();
    for (i, name) in NAMES.iter().enumerate() {
        let cgroup = format!("sysmeter-ansible-{}-{i}", std::process::id());
        let quota = (i == SLOWED).then_some(QUOTA);
        let group = need!(CpuLimit::new(&cgroup, WEIGHT, quota));
        println!("{name}: cgroup {:?} {}", group.version, group.dir.display());
        let host = SshHost::start(dir, i as u32, name, &authorized, Some(group));
        hosts.push(need!(host));
    }
    let inventory = write_ansible_files(dir, &hosts, &client_key);
    let vars = write_vars(dir, &db.url);
    let log = {
        // The hosts bench one after another on this machine's CPUs.
        let _alone = exclusive();
        run_playbook(dir, &inventory, &vars)
    };
    for host in &hosts {
        let run = std::fs::read(dir.join(format!("runs/{}.json", host.inventory)));
        let run: Value = serde_json::from_slice(&run.expect("fetched run")).expect("JSON");
        assert_eq!(run["host"]["hostname"], host.hostname, "{log}");
    }
    let fleet = json_out(sysmeter().args(["fleet", "--format", "json", "--db", &db.url]));
    let mut named: Vec<&str> = fleet["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .filter_map(|h| h["host"].as_str())
        .collect();
    named.sort_unstable();
    assert_eq!(named, NAMES, "{fleet}");
    check_outliers(&db.url, &log);
    drop(hosts);
}

/// `fleet --metric SPAWN_METRICS`: the slowed host is an outlier there, no other host is,
/// and its differences from the typical host include the cgroup's CPU limit.
fn check_outliers(url: &str, log: &str) {
    let spawn = json_out(sysmeter().args([
        "fleet",
        "--format",
        "json",
        "--metric",
        SPAWN_METRICS,
        "--db",
        url,
    ]));
    let outliers = spawn["outliers"].as_array().expect("outliers");
    let values = &spawn["metrics"];
    for m in values.as_array().expect("metrics") {
        let each = m["hosts"].as_array().expect("hosts").iter();
        let each: Vec<String> = each
            .map(|h| format!("{} {}", h["host"], h["value"]))
            .collect();
        println!("{}: {}", m["metric"], each.join(", "));
    }
    assert!(!outliers.is_empty(), "no outlier:\n{values:#}\n{log}");
    for o in outliers {
        println!(
            "outlier: {} · {}: {}× the fleet median",
            o["host"], o["metric"], o["ratio"]
        );
        assert_eq!(o["host"], NAMES[SLOWED], "{o:#}\n{values:#}");
        let fields: Vec<&str> = o["differences"]
            .as_array()
            .expect("differences")
            .iter()
            .filter_map(|d| d["field"].as_str())
            .collect();
        assert!(fields.contains(&"cgroup CPU limit"), "{o:#}");
    }
}

/// The inventory (each host by its namespace address, as root with the test's key) and an
/// ansible.cfg that keeps Ansible's files, ssh's control sockets and known hosts in `dir`.
fn write_ansible_files(dir: &Path, hosts: &[SshHost], key: &Path) -> PathBuf {
    let mut inventory = String::new();
    let mut known = String::new();
    for h in hosts {
        inventory.push_str(&format!("{} ansible_host={}\n", h.inventory, h.ip));
        let key: Vec<&str> = h.host_key.split_whitespace().take(2).collect();
        known.push_str(&format!("{} {}\n", h.ip, key.join(" ")));
    }
    inventory.push_str(&format!(
        "[all:vars]\nansible_user=root\nansible_ssh_private_key_file={}\n",
        path(key)
    ));
    std::fs::write(dir.join("known_hosts"), known).expect("known_hosts");
    let a = dir.join("ansible");
    let cfg = format!(
        "[defaults]\ninterpreter_python = /usr/bin/python3\nlocal_tmp = {a}/local\n\
         remote_tmp = {a}/remote\nretry_files_enabled = False\nnocolor = True\n\
         [ssh_connection]\npipelining = True\ncontrol_path_dir = {a}/cp\n\
         ssh_args = -F /dev/null -o ControlMaster=auto -o ControlPersist=60s \
         -o ConnectTimeout=30 -o IdentitiesOnly=yes -o StrictHostKeyChecking=yes \
         -o UserKnownHostsFile={}\n",
        path(&dir.join("known_hosts")),
        a = path(&a),
    );
    std::fs::create_dir(&a).expect("mkdir ansible");
    std::fs::write(a.join("ansible.cfg"), cfg).expect("ansible.cfg");
    let file = dir.join("inventory.ini");
    std::fs::write(&file, inventory).expect("inventory");
    file
}

/// The role's variables: the binary under test (a stripped copy: the debug build is ~190 MB
/// to send to every host, the copy ~30 MB), `os.task` in the quick profile, the binary and
/// the fetched records in `dir`, the PostgreSQL database to import into.
fn write_vars(dir: &Path, url: &str) -> PathBuf {
    let built = assert_cmd::cargo::cargo_bin("sysmeter");
    let stripped = dir.join("sysmeter");
    let strip = Command::new("strip")
        .arg("-o")
        .arg(&stripped)
        .arg(&built)
        .output();
    let binary = match strip {
        Ok(o) if o.status.success() => stripped,
        _ => built,
    };
    let vars = serde_json::json!({
        "sysmeter_binary": path(&binary),
        "sysmeter_dest": format!("{}/hosts/{{{{ inventory_hostname }}}}/sysmeter", path(dir)),
        "sysmeter_bench_args": ["--quick", "--only", "os.task"],
        "sysmeter_fetch_dir": path(&dir.join("runs")),
        "sysmeter_fleet_db": url,
    });
    let file = dir.join("vars.json");
    std::fs::write(&file, vars.to_string()).expect("vars.json");
    file
}

/// Runs the playbook (at most 10 minutes); its output, which must end in success.
fn run_playbook(dir: &Path, inventory: &Path, vars: &Path) -> String {
    let playbook = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/ansible/playbook.yml");
    let log = dir.join("ansible.log");
    let mut cmd = Command::new("ansible-playbook");
    cmd.arg("-i").arg(inventory).arg(&playbook);
    cmd.arg("-e").arg(format!("@{}", path(vars)));
    // Only the test's configuration: no ANSIBLE_* of the caller's environment.
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("ANSIBLE_")) {
        cmd.env_remove(k);
    }
    cmd.env("ANSIBLE_CONFIG", dir.join("ansible/ansible.cfg"))
        .env("ANSIBLE_HOME", dir.join("ansible/home"))
        .env("LC_ALL", "C.UTF-8")
        .env_remove("SYSMETER_DB")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log).expect("log"))
        .stderr(Stdio::from(
            std::fs::File::options()
                .append(true)
                .open(&log)
                .expect("log"),
        ));
    let mut child = cmd.spawn().expect("start ansible-playbook");
    let deadline = Instant::now() + Duration::from_secs(600);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for ansible-playbook") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    match status {
        Some(s) if s.success() => text,
        Some(s) => panic!("ansible-playbook failed ({s}):\n{text}"),
        None => panic!("ansible-playbook still running after 10 minutes:\n{text}"),
    }
}
