//! Machines for the Ansible fleet test (`pg::ansible`): each host is a network namespace
//! (`support::netns`, a /30 of its own from this one) running its own `sshd` — own config,
//! host key and authorized_keys in the test's temp dir, listening only on the namespace's
//! address — inside its own UTS namespace with its own host name (`unshare --uts` +
//! hostname(1)), optionally in a CPU-limited cgroup (`support::cpu_limit`). On drop every
//! process of the host (sshd, its sessions, what they started) is killed and the namespace,
//! the veth pair and the cgroup are removed, also on panic. Needs root, OpenSSH's `sshd`,
//! `ssh` and `ssh-keygen` (capability `sshd`), and util-linux's `nsenter` and `unshare`.

use std::fs::File;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::cpu_limit::CpuLimit;
use super::netns::Netns;
use super::skip::{Cap, Missing};

/// The OpenSSH server; absolute, as sshd re-executes itself for every connection.
const SSHD: &str = "/usr/sbin/sshd";

/// Whether the OpenSSH server and client tools are here.
pub fn openssh() -> Result<(), Missing> {
    let fix = "apt-get install openssh-server openssh-client";
    if !Path::new(SSHD).is_file() {
        return Err(Missing::new(Cap::Sshd, format!("no {SSHD}; {fix}")));
    }
    for tool in ["ssh", "ssh-keygen", "nsenter", "unshare", "hostname"] {
        if Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .map_or(true, |o| !o.status.success())
        {
            return Err(Missing::new(
                Cap::Sshd,
                format!("no `{tool}`; {fix} util-linux"),
            ));
        }
    }
    Ok(())
}

/// A new ed25519 key pair without passphrase at `path` and `path.pub`; the public key.
pub fn keygen(path: &Path) -> String {
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "sysmeter-test", "-f"])
        .arg(path)
        .output()
        .expect("run ssh-keygen");
    assert!(out.status.success(), "ssh-keygen: {out:?}");
    let public = path.with_extension("pub");
    std::fs::read_to_string(public).expect("read the public key")
}

/// One host of the test fleet: its names, address and sshd, removed on drop.
pub struct SshHost {
    /// Its name in the inventory.
    pub inventory: String,
    /// Its UTS host name, which its runs must carry.
    pub hostname: String,
    /// sshd's address, inside the namespace.
    pub ip: String,
    /// Its host key's public half (for known_hosts).
    pub host_key: String,
    sshd: Child,
    // Dropped in this order after `drop`: the namespace, then the cgroup.
    netns: Netns,
    _limit: Option<CpuLimit>,
}

impl SshHost {
    /// Host number `i` (0..16) named `hostname` in the UTS namespace, whose sshd takes the
    /// client key `authorized` and keeps its files under `dir`; in `limit` when given.
    pub fn start(
        dir: &Path,
        i: u32,
        hostname: &str,
        authorized: &Path,
        limit: Option<CpuLimit>,
    ) -> Result<SshHost, Missing> {
        // Unique per test process: the pid picks the names and a /26 in 10.214.0.0/16.
        let pid = std::process::id();
        let (x, y) = ((pid / 4) % 250 + 1, (pid % 4) * 64 + i * 4);
        let (host_ip, ip) = (
            format!("10.214.{x}.{}", y + 1),
            format!("10.214.{x}.{}", y + 2),
        );
        let name = format!("sysmeter-ans-{pid}-{i}");
        let (veth, peer) = (format!("sma{pid}h{i}"), format!("smb{pid}h{i}"));
        let netns = Netns::create(&name, &veth, &peer, &host_ip, &ip)
            .map_err(|e| Missing::new(Cap::Netns, format!("cannot build the namespace: {e}")))?;
        let host_key = keygen(&dir.join(format!("hostkey-{i}")));
        // sshd wants its privilege-separation directory (made by Debian's ssh service, which a
        // container without systemd never starts), already for `sshd -t`.
        std::fs::create_dir_all("/run/sshd").expect("mkdir /run/sshd");
        let config = sshd_config(dir, i, &ip, authorized);
        let log = File::create(dir.join(format!("sshd-{i}.log"))).expect("sshd log");
        let sshd = Command::new("nsenter")
            .arg(format!("--net=/run/netns/{}", netns.name))
            .args(["unshare", "--uts", "sh", "-c"])
            .arg(format!(
                "hostname {hostname} && exec {SSHD} -D -e -f {}",
                config.display()
            ))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start sshd");
        // The same process becomes sshd (exec): it and every session it forks are limited.
        if let Some(limit) = &limit {
            limit.add(sshd.id());
        }
        let host = SshHost {
            inventory: format!("h{i}"),
            hostname: hostname.to_string(),
            ip,
            host_key,
            sshd,
            netns,
            _limit: limit,
        };
        host.wait_listening(dir, i);
        Ok(host)
    }

    /// Waits until sshd accepts connections (30 s: a loaded machine), else fails with its log.
    fn wait_listening(&self, dir: &Path, i: u32) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let addr = format!("{}:22", self.ip);
        while Instant::now() < deadline {
            if TcpStream::connect(&addr).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let log = std::fs::read_to_string(dir.join(format!("sshd-{i}.log"))).unwrap_or_default();
        panic!(
            "sshd of {} did not listen on {addr} within 30 s:\n{log}",
            self.hostname
        );
    }
}

impl Drop for SshHost {
    fn drop(&mut self) {
        // sshd, its sessions and what they started (Ansible's modules, the bench).
        self.netns.kill_all();
        let _ = self.sshd.kill();
        let _ = self.sshd.wait();
    }
}

/// sshd's configuration for host `i`: only its address, root by key only, no PAM, files in
/// `dir` (StrictModes off: they are in a temp dir under /tmp), sftp built in.
fn sshd_config(dir: &Path, i: u32, ip: &str, authorized: &Path) -> PathBuf {
    let path = dir.join(format!("sshd-{i}.conf"));
    let text = format!(
        "ListenAddress {ip}:22\n\
         HostKey {}\n\
         AuthorizedKeysFile {}\n\
         PidFile none\n\
         PermitRootLogin prohibit-password\n\
         PasswordAuthentication no\n\
         KbdInteractiveAuthentication no\n\
         UsePAM no\n\
         StrictModes no\n\
         Subsystem sftp internal-sftp\n",
        dir.join(format!("hostkey-{i}")).display(),
        authorized.display()
    );
    std::fs::write(&path, text).expect("write sshd config");
    let check = Command::new(SSHD).arg("-t").arg("-f").arg(&path).output();
    let check = check.expect("run sshd -t");
    assert!(check.status.success(), "sshd -t: {check:?}");
    path
}
