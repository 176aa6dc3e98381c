//! A network namespace joined to this one by a veth pair, with addresses the test picks
//! (`netns` and the Ansible fleet test of `pg::ansible`), and the processes inside it. On
//! drop every process still in the namespace is killed, then the pair and the namespace
//! are deleted, also on panic. Needs root and ip(8).

use std::process::Command;

/// Runs a command; `Err` with its stderr when it fails or cannot start.
pub fn run(args: &[&str]) -> Result<(), String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| format!("{}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A namespace and a veth pair, deleted on drop.
pub struct Netns {
    /// The namespace's name (`ip netns`; `/run/netns/<name>`).
    pub name: String,
    veth: String,
}

impl Netns {
    /// Namespace `name` with the pair `veth` (here, `host_ip`) – `peer` (inside, `ns_ip`),
    /// a /30 between them, and the namespace's loopback up.
    pub fn create(
        name: &str,
        veth: &str,
        peer: &str,
        host_ip: &str,
        ns_ip: &str,
    ) -> Result<Netns, String> {
        run(&["ip", "netns", "add", name])?;
        // From here on, dropping the guard cleans up whatever was made.
        let ns = Netns {
            name: name.into(),
            veth: veth.into(),
        };
        run(&[
            "ip", "link", "add", veth, "type", "veth", "peer", "name", peer,
        ])?;
        run(&["ip", "link", "set", peer, "netns", name])?;
        run(&["ip", "addr", "add", &format!("{host_ip}/30"), "dev", veth])?;
        run(&["ip", "link", "set", veth, "up"])?;
        let exec = |cmd: &[&str]| {
            let mut v = vec!["ip", "netns", "exec", name];
            v.extend_from_slice(cmd);
            run(&v)
        };
        exec(&["ip", "addr", "add", &format!("{ns_ip}/30"), "dev", peer])?;
        exec(&["ip", "link", "set", peer, "up"])?;
        exec(&["ip", "link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// The processes in the namespace now (`ip netns pids`).
    pub fn pids(&self) -> Vec<String> {
        Command::new("ip")
            .args(["netns", "pids", &self.name])
            .output()
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .split_whitespace()
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Kills every process in the namespace (SIGKILL), again while new ones appear (a
    /// server forks while it dies), for at most 10 s.
    pub fn kill_all(&self) {
        super::cmd::kill_until_empty(|| self.pids());
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        self.kill_all();
        // Deleting one end of a veth pair deletes both.
        let _ = run(&["ip", "link", "del", &self.veth]);
        let _ = run(&["ip", "netns", "del", &self.name]);
    }
}
