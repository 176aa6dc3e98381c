//! The one loader of sysmeter's BPF programs (in-kernel aggregation, docs/bpf.md): whether
//! they may run here ([`available`]: root or CAP_BPF + CAP_PERFMON, and the kernel's BTF at
//! `/sys/kernel/btf/vmlinux`), loading a committed object with its tracefs field offsets as
//! globals, attaching its programs to tracepoints, and reading its maps back (hash maps as
//! fixed-size byte or word arrays, stack traces, a counter array).
//!
//! Keys and values cross as `[u8; N]`/`[u64; N]` arrays, which aya already knows are plain
//! data: this crate has no `unsafe`, so no `Pod` impls of its own. The objects are built by
//! `scripts/build-bpf.sh` from `crates/sysmeter/bpf/*.bpf.c` and committed, so that building
//! needs no clang. Depends on `host::procfs` and aya; never on a diagnosis.

pub use super::bytes::{u32_at, u64_at};
use std::path::Path;

use aya::maps::{Array, HashMap as BpfHash, MapData, StackTraceMap};
use aya::programs::{Program, ProgramError, RawTracePoint, TracePoint, UProbe};
use aya::{Ebpf, EbpfLoader, Pod};

use super::backend::Reason;
use super::unwind::Regs;
use crate::host::procfs::parse_status;

/// The kernel's own type information, which the verifier needs for the BTF helpers.
pub const VMLINUX_BTF: &str = "/sys/kernel/btf/vmlinux";

/// Log2 buckets of `struct value` (bpf/common.h), the aggregate both programs keep.
pub const BUCKETS: usize = 40;
/// `struct value`: count, sum, histogram.
pub const VALUE_WORDS: usize = 2 + BUCKETS;
/// Words of a `struct snapshot` (bpf/stack.h) before its copy of the stack: the time or
/// instruction pointer, the stack pointer, the frame pointer.
pub const SNAPSHOT_HEAD: usize = 3;
/// `CAP_SYS_ADMIN`, which implies both of the next two.
const CAP_SYS_ADMIN: u32 = 21;
/// `CAP_PERFMON`: tracepoints and stacks.
const CAP_PERFMON: u32 = 38;
/// `CAP_BPF`: loading programs and creating maps.
const CAP_BPF: u32 = 39;

/// Why a BPF program or map failed, with what was attempted.
#[derive(Debug, thiserror::Error)]
#[error("BPF {what}: {cause}")]
pub struct BpfError {
    /// What was attempted (`load offcpu.bpf.o`, `attach sched/sched_switch`, …).
    pub what: String,
    /// aya's answer, as text (its error types are not `Send` + `'static` in every case).
    pub cause: String,
}

fn err(what: impl Into<String>) -> impl FnOnce(&dyn std::fmt::Display) -> BpfError {
    let what = what.into();
    move |cause| BpfError {
        what,
        cause: cause.to_string(),
    }
}

/// `Ok` when BPF programs can be loaded here, else one line saying what is missing and how
/// to get it.
pub fn available() -> Result<(), Reason> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let status = parse_status(&status);
    let permitted =
        status.has_cap(CAP_SYS_ADMIN) || (status.has_cap(CAP_BPF) && status.has_cap(CAP_PERFMON));
    if !permitted {
        return Err(Reason(
            "not root and without CAP_BPF + CAP_PERFMON (run as root, or \
             `setcap cap_bpf,cap_perfmon+ep` on sysmeter)"
                .into(),
        ));
    }
    if !Path::new(VMLINUX_BTF).exists() {
        return Err(Reason(format!(
            "the kernel publishes no BTF ({VMLINUX_BTF} missing; a kernel built with \
             CONFIG_DEBUG_INFO_BTF=y has it)"
        )));
    }
    Ok(())
}

/// A tracepoint field a program reads, as (the program's global that receives its offset,
/// category, event, field): the offsets come from tracefs because they differ between
/// kernels.
pub type Field = (&'static str, &'static str, &'static str, &'static str);

/// The fields follow.h's programs read (a forked child, an exec), in every object that
/// follows its targets' processes in the kernel ([`Loaded::attached`]).
pub const FOLLOW_FIELDS: [Field; 2] = [
    ("off_fork_child", "sched", "sched_process_fork", "child_pid"),
    ("off_exec_pid", "sched", "sched_process_exec", "pid"),
];

/// The offsets of `fields` as (global, offset), from the tracefs that holds `probe` (an
/// `events/CATEGORY/EVENT/id` path; root mounts tracefs when it is not, as perf does, and
/// aya attaches through it too); `Err` is one line saying why not.
pub fn field_offsets(probe: &str, fields: &[Field]) -> Result<Vec<(&'static str, u32)>, Reason> {
    use super::tracefs::{EventFormat, holding, mount};
    let base = holding(probe)
        .or_else(|| mount().then(|| holding(probe)).flatten())
        .ok_or_else(|| {
            Reason(format!(
                "tracefs with {probe} is not mounted and could not be mounted"
            ))
        })?;
    let mut out = Vec::new();
    for &(global, category, event, field) in fields {
        let f = EventFormat::read(base, category, event).map_err(|e| Reason(e.to_string()))?;
        let at = f
            .offset(field)
            .ok_or_else(|| Reason(format!("{}/format has no field {field}", f.dir)))?;
        out.push((global, at as u32));
    }
    Ok(out)
}

/// A loaded BPF object; its programs stay attached until it is dropped.
pub struct Loaded {
    ebpf: Ebpf,
    /// Programs loaded into the kernel already (a uprobe program is attached many times).
    uprobes: std::collections::HashSet<String>,
}

impl std::fmt::Debug for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Loaded(BPF object)")
    }
}

impl Loaded {
    /// Loads `bytes` (an object from `include_bytes_aligned!`: aya refuses unaligned ELF)
    /// named `name` for messages, with the `u32` globals set before the verifier sees them.
    pub fn load(name: &str, bytes: &[u8], globals: &[(&str, u32)]) -> Result<Loaded, BpfError> {
        let mut loader = EbpfLoader::new();
        for (global, value) in globals {
            loader.set_global(global, value, true);
        }
        let ebpf = loader
            .load(bytes)
            .map_err(|e| err(format!("load {name}"))(&e))?;
        Ok(Loaded {
            ebpf,
            uprobes: Default::default(),
        })
    }

    /// Checks that BPF programs may run here ([`available`]), reads the offsets of `fields`
    /// and of [`FOLLOW_FIELDS`] ([`field_offsets`], from the tracefs that holds the first
    /// one's event), loads `bytes` (named `name`: an object that includes follow.h) with them
    /// as globals, and attaches each program of `tracepoints` and follow.h's two (category,
    /// event: the program is named as its event). `Err` is one line saying why they cannot
    /// run here.
    pub fn attached(
        name: &str,
        bytes: &[u8],
        fields: &[Field],
        tracepoints: &[(&str, &str)],
    ) -> Result<Loaded, Reason> {
        available()?;
        let fields: Vec<Field> = fields.iter().chain(&FOLLOW_FIELDS).copied().collect();
        let (_, category, event, _) = fields[0];
        let probe = format!("events/{category}/{event}/id");
        let globals = field_offsets(&probe, &fields)?;
        let mut l = Loaded::load(name, bytes, &globals).map_err(|e| Reason(e.to_string()))?;
        // follow.h's two programs, each on the tracepoint whose field it reads.
        let follow = FOLLOW_FIELDS.map(|(_, category, event, _)| (category, event));
        for (category, event) in tracepoints.iter().chain(&follow) {
            l.attach_tracepoint(event, category, event)
                .map_err(|e| Reason(e.to_string()))?;
        }
        Ok(l)
    }

    /// Loads program `program` and attaches it to tracepoint `category:event`.
    pub fn attach_tracepoint(
        &mut self,
        program: &str,
        category: &str,
        event: &str,
    ) -> Result<(), BpfError> {
        let what = format!("attach {program} to {category}:{event}");
        let p: &mut TracePoint = program_of(&mut self.ebpf, program, &what)?;
        p.load().map_err(|e| err(what.clone())(&e))?;
        p.attach(category, event).map_err(|e| err(what)(&e))?;
        Ok(())
    }

    /// Loads program `program` and attaches it to raw tracepoint `name` (`sys_enter`): the
    /// program gets the tracepoint's arguments without the record a perf-attached one is
    /// handed, and perf's readers of that tracepoint are not touched.
    pub fn attach_raw_tracepoint(&mut self, program: &str, name: &str) -> Result<(), BpfError> {
        let what = format!("attach {program} to raw tracepoint {name}");
        let p: &mut RawTracePoint = program_of(&mut self.ebpf, program, &what)?;
        p.load().map_err(|e| err(what.clone())(&e))?;
        p.attach(name).map_err(|e| err(what)(&e))?;
        Ok(())
    }

    /// Attaches uprobe program `program` (its kind, entry or return, is its section's) at
    /// file offset `offset` of `path`, firing for the address space of process `pid` only
    /// (while its thread `pid` lives: the kernel's filter is that task's), or for every
    /// process that maps `path` (`None`: the program must filter); loaded on first use.
    pub fn attach_uprobe(
        &mut self,
        program: &str,
        path: &Path,
        offset: u64,
        pid: Option<i32>,
    ) -> Result<(), BpfError> {
        let what = format!("attach {program} to {}+{offset:#x}", path.display());
        let p: &mut UProbe = program_of(&mut self.ebpf, program, &what)?;
        if self.uprobes.insert(program.to_string()) {
            p.load().map_err(|e| err(what.clone())(&e))?;
        }
        p.attach(None, offset, path, pid)
            .map_err(|e| err(what)(&e))?;
        Ok(())
    }

    fn hash<K: Pod, V: Pod>(&mut self, map: &str) -> Result<BpfHash<&mut MapData, K, V>, BpfError> {
        let what = format!("map {map}");
        let m = self
            .ebpf
            .map_mut(map)
            .ok_or_else(|| err(what.clone())(&"no such map in the object"))?;
        BpfHash::try_from(m).map_err(|e| err(what)(&e))
    }

    /// Sets `key` to `value` in hash map `map`.
    pub fn insert<K: Pod, V: Pod>(&mut self, map: &str, key: K, value: V) -> Result<(), BpfError> {
        let mut h = self.hash::<K, V>(map)?;
        h.insert(key, value, 0)
            .map_err(|e| err(format!("insert into {map}"))(&e))
    }

    /// Removes `key` from hash map `map` of `V` values (a key that is not there is no
    /// error).
    pub fn remove<K: Pod, V: Pod>(&mut self, map: &str, key: &K) -> Result<(), BpfError> {
        let mut h = self.hash::<K, V>(map)?;
        match h.remove(key) {
            Ok(()) | Err(aya::maps::MapError::KeyNotFound) => Ok(()),
            Err(e) => Err(err(format!("remove from {map}"))(&e)),
        }
    }

    /// Every entry of hash map `map`; entries deleted while it is read are skipped.
    pub fn entries<K: Pod, V: Pod>(&mut self, map: &str) -> Result<Vec<(K, V)>, BpfError> {
        let h = self.hash::<K, V>(map)?;
        Ok(h.iter().filter_map(Result::ok).collect())
    }

    /// The frames (instruction pointers, innermost first) of stack `id` in stack-trace map
    /// `map`; empty when the id is not there.
    pub fn stack(&mut self, map: &str, id: u32) -> Result<Vec<u64>, BpfError> {
        let what = format!("map {map}");
        let m = self
            .ebpf
            .map(map)
            .ok_or_else(|| err(what.clone())(&"no such map in the object"))?;
        let stacks = StackTraceMap::try_from(m).map_err(|e| err(what)(&e))?;
        Ok(stacks
            .get(&id, 0)
            .map(|s| s.frames().iter().map(|f| f.ip).collect())
            .unwrap_or_default())
    }

    /// The frames of each stack of `ids` in stack-trace map `map`, by id.
    pub fn stacks(
        &mut self,
        map: &str,
        ids: &[i32],
    ) -> Result<std::collections::HashMap<i32, Vec<u64>>, BpfError> {
        ids.iter()
            .map(|&id| Ok((id, self.stack(map, id as u32)?)))
            .collect()
    }

    /// The `u64` slots of array map `map`.
    pub fn counters(&mut self, map: &str) -> Result<Vec<u64>, BpfError> {
        let what = format!("map {map}");
        let m = self
            .ebpf
            .map(map)
            .ok_or_else(|| err(what.clone())(&"no such map in the object"))?;
        let a: Array<&MapData, u64> = Array::try_from(m).map_err(|e| err(what)(&e))?;
        Ok(a.iter().filter_map(Result::ok).collect())
    }
}

/// A `struct snapshot` of bpf/stack.h read back (the one decoding of it, for every program):
/// a thread's user registers and the top of its user stack, from which the unwinder walks
/// the callers that the kernel's frame-pointer walk misses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Its first word: when it was taken (the tracepoint programs), or the instruction
    /// pointer (alloc's uretprobe).
    pub first: u64,
    /// The stack pointer.
    pub sp: u64,
    /// The frame pointer.
    pub bp: u64,
    /// The top of the user stack, from `sp` up.
    pub stack: Vec<u8>,
}

impl Snapshot {
    /// Decodes the words of a snapshot, as its map holds them (native byte order: the
    /// kernel that wrote them runs here).
    pub fn from_words(words: &[u64]) -> Snapshot {
        let at = |i: usize| words.get(i).copied().unwrap_or(0);
        let stack = words.get(SNAPSHOT_HEAD..).unwrap_or_default();
        Snapshot {
            first: at(0),
            sp: at(1),
            bp: at(2),
            stack: stack.iter().flat_map(|w| w.to_ne_bytes()).collect(),
        }
    }

    /// The registers the unwinder starts from, at instruction pointer `ip`.
    pub fn regs(&self, ip: u64) -> Regs {
        Regs {
            ip,
            sp: self.sp,
            bp: self.bp,
        }
    }
}

/// Program `program` of `ebpf` as its kind `P` (a tracepoint, a uprobe); `what` is the
/// attempt an error names.
fn program_of<'e, P>(ebpf: &'e mut Ebpf, program: &str, what: &str) -> Result<&'e mut P, BpfError>
where
    &'e mut P: TryFrom<&'e mut Program, Error = ProgramError>,
{
    ebpf.program_mut(program)
        .ok_or_else(|| err(what)(&"no such program in the object"))?
        .try_into()
        .map_err(|e| err(what)(&e))
}

/// The kernel keeps a count, a sum and a log2 histogram per key, not each interval: the
/// `count` durations spread over the log2 buckets of `hist` (a bucket's middle each) and
/// scaled so that they add up to `sum` exactly.
pub fn durations(count: u64, sum: u64, hist: &[u64]) -> Vec<u64> {
    let mut mids: Vec<f64> = Vec::new();
    for (b, &n) in hist.iter().enumerate() {
        let mid = if b == 0 {
            1.0
        } else {
            1.5 * (1u64 << b) as f64
        };
        mids.extend(std::iter::repeat_n(mid, n as usize));
    }
    // A histogram that disagrees with the count (read while being updated): even shares.
    if mids.len() as u64 != count || mids.is_empty() {
        mids = vec![1.0; count as usize];
    }
    let scale = sum as f64 / mids.iter().sum::<f64>().max(f64::MIN_POSITIVE);
    let mut out: Vec<u64> = mids.iter().map(|m| (m * scale).round() as u64).collect();
    let given: u64 = out.iter().sum();
    if let Some(last) = out.last_mut() {
        *last = (*last + sum).saturating_sub(given);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_in_native_order_and_zero_past_the_end() {
        let mut b = 7u32.to_ne_bytes().to_vec();
        b.extend_from_slice(&9u64.to_ne_bytes());
        assert_eq!(u32_at(&b, 0), 7);
        assert_eq!(u64_at(&b, 4), 9);
        assert_eq!(u64_at(&b, 8), 0);
    }

    #[test]
    fn availability_is_a_reason_or_ok() {
        if let Err(why) = available() {
            assert!(!why.0.is_empty());
        }
    }

    #[test]
    fn durations_add_up_to_the_sum_and_follow_the_buckets() {
        let mut hist = [0u64; 40];
        hist[10] = 2;
        hist[20] = 1;
        let d = durations(3, 3_000_000, &hist);
        assert_eq!(d.len(), 3);
        assert_eq!(d.iter().sum::<u64>(), 3_000_000);
        assert!(d[2] > 100 * d[0], "{d:?}");
        assert_eq!(durations(1, 77, &hist[..0]), vec![77]);
        assert!(durations(0, 0, &hist).is_empty());
    }
}
