//! What stores a directory's files: the file system type (from the `statfs` magic) and the
//! block device behind it with its rotational flag and whether it is a virtual (virtio/Xen)
//! disk, for the `fs` experiments' device finding.
//!
//! The classification functions are pure and unit-tested; [`storage_of`] is the one reader
//! (stat, statfs, /sys/dev/block). Depends on `sysmeter-sys::files` and `std` only.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The storage behind a directory.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Storage {
    /// File system name (`ext4`, `tmpfs`, `fuse`, `nfs`, …; `unknown (0x…)` otherwise).
    pub fs_type: String,
    /// Whether the file system keeps its data in memory (tmpfs, ramfs): nothing to evict.
    pub in_memory: bool,
    /// Whether it is a network or FUSE file system.
    pub remote_or_fuse: bool,
    /// Kernel name of the whole disk (`vda`, `nvme0n1`), when there is a block device.
    pub device: Option<String>,
    /// The disk's `queue/rotational` flag.
    pub rotational: Option<bool>,
    /// A paravirtual disk (virtio, Xen): its rotational flag describes nothing real.
    pub virtual_disk: bool,
}

impl Storage {
    /// One phrase for findings: "virtual disk vda (virtio; …)", "SSD nvme0n1", ….
    pub fn describe(&self) -> String {
        let fs = &self.fs_type;
        match (&self.device, self.rotational) {
            _ if self.in_memory => format!("no disk: {fs} keeps file data in memory"),
            (Some(d), r) if self.virtual_disk => format!(
                "virtual disk {d} ({fs}; paravirtual, its rotational flag {} says nothing about \
                 the host's storage)",
                r.map_or("is unknown", |r| if r { "1" } else { "0" })
            ),
            (Some(d), Some(true)) => format!("rotational disk {d} ({fs})"),
            (Some(d), Some(false)) => format!("non-rotational disk (SSD) {d} ({fs})"),
            (Some(d), None) => format!("disk {d} ({fs}, rotational flag unknown)"),
            (None, _) if self.remote_or_fuse => format!("{fs} mount (network or user space)"),
            (None, _) => format!("{fs} with no block device found"),
        }
    }
}

/// Name of a file system from its `statfs` magic, and whether it lives in memory and
/// whether it is network/FUSE.
pub fn classify_magic(magic: u64) -> (String, bool, bool) {
    let (name, mem, remote) = match magic {
        0x0102_1994 => ("tmpfs", true, false),
        0x8584_58f6 => ("ramfs", true, false),
        0xef53 => ("ext4", false, false),
        0x5846_5342 => ("xfs", false, false),
        0x9123_683e => ("btrfs", false, false),
        0x794c_7630 => ("overlay", false, false),
        0x6573_5546 => ("fuse", false, true),
        0x6969 => ("nfs", false, true),
        0xff53_4d42 | 0xfe53_4d42 => ("cifs/smb", false, true),
        0x0102_1997 => ("9p", false, true),
        0x6a65_6a63 => ("virtiofs", false, true),
        0x2fc1_2fc1 => ("zfs", false, false),
        0xf2f5_2010 => ("f2fs", false, false),
        _ => return (format!("unknown (0x{magic:x})"), false, false),
    };
    (name.to_string(), mem, remote)
}

/// glibc's encoding of `st_dev`: (major, minor).
pub fn split_dev(dev: u64) -> (u64, u64) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major, minor)
}

/// Whether a disk is paravirtual, from its kernel name, its resolved sysfs device path and
/// its `device/vendor` (0x1af4 is Red Hat's virtio vendor id).
pub fn is_virtual_disk(name: &str, sysfs_path: &str, vendor: Option<&str>) -> bool {
    sysfs_path.contains("/virtio")
        || sysfs_path.contains("/xen")
        || vendor.is_some_and(|v| v.trim() == "0x1af4")
        || name.starts_with("vd")
        || name.starts_with("xvd")
}

/// The storage behind `dir` (never fails: unknown parts stay `None`).
pub fn storage_of(dir: &Path) -> Storage {
    let (fs_type, in_memory, remote_or_fuse) = match sysmeter_sys::files::fs_magic(dir) {
        Ok(m) => classify_magic(m),
        Err(_) => ("unknown".to_string(), false, false),
    };
    let mut s = Storage {
        fs_type,
        in_memory,
        remote_or_fuse,
        ..Storage::default()
    };
    let Ok(meta) = fs::metadata(dir) else {
        return s;
    };
    let (major, minor) = split_dev(meta.dev());
    if major == 0 {
        return s; // anonymous device: tmpfs, FUSE, NFS, overlay
    }
    let Ok(mut node) = fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")) else {
        return s;
    };
    if node.join("partition").exists()
        && let Some(parent) = node.parent()
    {
        node = PathBuf::from(parent);
    }
    let name = node
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let read = |f: &str| fs::read_to_string(node.join(f)).ok();
    s.rotational = read("queue/rotational").map(|t| t.trim() == "1");
    let vendor = read("device/vendor");
    s.virtual_disk = is_virtual_disk(&name, &node.to_string_lossy(), vendor.as_deref());
    s.device = Some(name);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers_name_file_systems() {
        assert_eq!(classify_magic(0x0102_1994), ("tmpfs".into(), true, false));
        assert_eq!(classify_magic(0xef53), ("ext4".into(), false, false));
        assert_eq!(classify_magic(0x6573_5546), ("fuse".into(), false, true));
        assert!(classify_magic(0x6969).2);
        assert!(classify_magic(0x1234).0.starts_with("unknown (0x1234"));
    }

    #[test]
    fn st_dev_splits_like_glibc() {
        // makedev(254, 0) and makedev(259, 65537)
        assert_eq!(split_dev(0xfe00), (254, 0));
        let dev = (259u64 & 0xfff) << 8 | (65537u64 & 0xff) | ((65537u64 & !0xff) << 12);
        assert_eq!(split_dev(dev), (259, 65537));
    }

    #[test]
    fn virtio_and_real_disks() {
        let virtio = "/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda";
        assert!(is_virtual_disk("vda", virtio, Some("0x1af4\n")));
        assert!(is_virtual_disk(
            "sda",
            "/sys/devices/x/block/sda",
            Some("0x1af4")
        ));
        let nvme = "/sys/devices/pci0000:00/0000:00:1d.0/nvme/nvme0/nvme0n1";
        assert!(!is_virtual_disk("nvme0n1", nvme, None));
    }

    #[test]
    fn descriptions_say_what_the_device_is() {
        let mut s = Storage {
            fs_type: "ext4".into(),
            device: Some("vda".into()),
            rotational: Some(true),
            virtual_disk: true,
            ..Storage::default()
        };
        assert!(s.describe().starts_with("virtual disk vda"));
        s.virtual_disk = false;
        assert!(s.describe().starts_with("rotational disk vda"));
        s.rotational = Some(false);
        assert!(s.describe().contains("SSD"));
        let tmp = Storage {
            fs_type: "tmpfs".into(),
            in_memory: true,
            ..Storage::default()
        };
        assert!(tmp.describe().contains("in memory"));
    }

    #[test]
    fn reads_the_temp_dir() {
        let s = storage_of(&std::env::temp_dir());
        assert!(!s.fs_type.is_empty());
    }
}
