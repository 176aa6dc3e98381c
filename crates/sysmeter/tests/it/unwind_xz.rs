//! Integration tests of the unwinder on a distribution binary: Debian's `/usr/bin/xz`
//! (stripped, no frame pointers; skipped without it, capability `xz`). `profile` on ~5 MB of
//! generated text has at most 10% truncated stacks, `lzma_code` on ≥ 80% of the stacks and
//! liblzma's hot functions as separate rows (`liblzma.so.5…+0xADDR`); `locks` with two
//! threads names its waits' call sites in liblzma (never the C library's `futex_wait`), as
//! its in-process table does.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::needs::{perf, tracepoints};
use crate::support::skip::{Cap, Missing};
use crate::support::{need, result};
use crate::unwind::{has, profile_folded, wait_stacks};

/// Debian's xz, or why the test cannot run.
fn xz() -> Result<&'static str, Missing> {
    let path = "/usr/bin/xz";
    match Path::new(path).exists() {
        true => Ok(path),
        false => Err(Missing::new(
            Cap::Xz,
            "no /usr/bin/xz (apt-get install xz-utils)",
        )),
    }
}

/// ~5 MB of text made of a few thousand made-up words (compresses like prose).
fn text_file(dir: &Path) -> PathBuf {
    let mut rng = fastrand::Rng::with_seed(32);
    let words: Vec<String> = (0..5000)
        .map(|_| {
            let len = rng.usize(2..10);
            (0..len).map(|_| rng.lowercase()).collect()
        })
        .collect();
    let mut text = String::with_capacity(5 << 20);
    while text.len() < 5 << 20 {
        for _ in 0..12 {
            text.push_str(&words[rng.usize(..words.len())]);
            text.push(' ');
        }
        text.push('\n');
    }
    let path = dir.join("text.txt");
    std::fs::write(&path, text).expect("text written");
    path
}

/// The value of finding `key` of result `id`.
fn finding_value(run: &Value, id: &str, key: &str) -> f64 {
    let findings = result(run, id)["findings"].clone();
    findings
        .as_array()
        .and_then(|f| f.iter().find(|x| x["key"] == key))
        .and_then(|x| x["value"].as_f64())
        .unwrap_or_else(|| panic!("no {key} value: {findings}"))
}

#[test]
fn xz_stacks_are_whole_and_its_stripped_functions_separate() {
    let _alone = crate::support::observing_alone(&[
        crate::support::Event::Futex,
        crate::support::Event::Sched,
    ]);
    need!(perf());
    let xz = need!(xz());
    let dir = tempfile::tempdir().expect("tempdir");
    let text = text_file(dir.path()).to_string_lossy().to_string();
    let out = dir.path().join("run.json").to_string_lossy().to_string();
    let args = [
        "--format", "json", "--out", &out, "--", xz, "-T1", "-k", "-f", "-3",
    ];
    let stacks = profile_folded(dir.path(), &[&args[..], &[&text]].concat());
    let run: Value = serde_json::from_slice(&std::fs::read(&out).expect("report")).expect("JSON");
    let truncated = finding_value(&run, "profile", "truncated_stacks");
    assert!(truncated <= 0.10, "{:.1}% truncated", 100.0 * truncated);
    let total: u64 = stacks.iter().map(|s| s.1).sum();
    let coding: u64 = stacks
        .iter()
        .filter(|(f, _)| has(f, "lzma_code"))
        .map(|s| s.1)
        .sum();
    assert!(
        coding as f64 >= 0.8 * total as f64,
        "lzma_code on {coding} of {total} stacks"
    );
    // The stripped library's hot code is split per function: several leaves of ≥ 1% each.
    let mut leaves: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    for (frames, n) in &stacks {
        let user_leaf = frames.iter().rev().find(|f| !f.ends_with("_[k]"));
        if let Some(leaf) = user_leaf.filter(|f| f.starts_with("liblzma.so.5") && f.contains("+0x"))
        {
            *leaves.entry(leaf).or_default() += n;
        }
    }
    let rows = leaves.values().filter(|&&n| n * 100 >= total).count();
    assert!(
        rows >= 2,
        "liblzma's functions are not told apart: {leaves:?}"
    );
}

#[test]
fn xz_waits_are_named_outside_the_c_library() {
    let _on =
        crate::support::observing(&[crate::support::Event::Futex, crate::support::Event::Sched]);
    need!(tracepoints());
    let xz = need!(xz());
    let dir = tempfile::tempdir().expect("tempdir");
    let text = text_file(dir.path()).to_string_lossy().to_string();
    let (run, stacks) = wait_stacks(dir.path(), &[xz, "-T2", "-k", "-f", "-3", &text]);
    let metrics = result(&run, "locks")["metrics"].clone();
    let sites: Vec<&str> = metrics
        .as_array()
        .map(|m| m.iter().filter_map(|x| x["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(!sites.is_empty(), "xz -T2 never waited: {stacks:?}");
    // Row names end in the call site: `wait 1 condvar: liblzma.so.5.4.1+0xc300` (liblzma
    // is stripped: its object and the function's entry in its unwind table), never the C
    // library's `futex_wait (futex-internal.h:146)`.
    let in_liblzma = |site: &str| site.starts_with("liblzma") || site.starts_with("lzma_");
    let named: Vec<&str> = sites
        .iter()
        .filter_map(|s| s.split_once(": ").map(|(_, site)| site))
        .collect();
    assert!(
        named.iter().any(|s| in_liblzma(s)),
        "no call site in liblzma: {sites:?}"
    );
    assert!(
        named.iter().all(|s| !s.contains("futex")),
        "a call site in the C library: {sites:?}"
    );
    // The in-process table of the same run names liblzma too.
    let table = result(&run, "locks")["artifacts"]
        .as_array()
        .and_then(|a| a.iter().find(|a| a["name"] == "lock table"))
        .and_then(|a| a["content"].as_str().map(str::to_string))
        .unwrap_or_default();
    assert!(table.contains("\"site\":\"liblzma"), "{table}");
    // And the whole stack is there: the waits of the main thread go up to lzma_code.
    assert!(
        stacks.iter().any(|(f, _)| has(f, "lzma_code")),
        "{stacks:?}"
    );
}
