//! Where tracefs is: the mount points tried, the one that holds a given file, and mounting it
//! as `perf` does; and the one reader of an event's `id` and `format` files, whose field
//! offsets every tracer uses instead of assuming a layout. The tracepoint backend of
//! `trace`, the path uprobes of `run`, `calls`, `locks` and `profile --off-cpu` read event
//! ids there; [`super::uprobes`] writes probe definitions.
//!
//! Depends on std only (and `mount(8)` when asked to mount).

use std::path::Path;

/// The tracefs mount points tried, in order.
pub const MOUNT_POINTS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The first mount point holding `rel` (e.g. `uprobe_events`), if any.
pub fn holding(rel: &str) -> Option<&'static str> {
    MOUNT_POINTS
        .into_iter()
        .find(|base| Path::new(base).join(rel).exists())
}

/// Why the tracepoint `event` (`group:name`) was found under no mount point, as a sentence
/// with the fix: tracefs is there but refuses this user (it is root's only), or it is not
/// mounted, or the kernel lacks the event.
pub fn missing(event: &str) -> String {
    let refused = MOUNT_POINTS.into_iter().any(|base| {
        std::fs::read_dir(base).is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
    });
    if refused {
        format!(
            "the {event} tracepoint cannot be read: tracefs ({}) is readable by root only; run \
             sysmeter as root",
            MOUNT_POINTS[0]
        )
    } else {
        format!(
            "the {event} tracepoint is missing (tracefs not mounted at {}, or a kernel without \
             it); as root: `mount -t tracefs nodev {}`",
            MOUNT_POINTS[0], MOUNT_POINTS[0]
        )
    }
}

/// Mounts tracefs at the first mount point with mount(8), as `perf` does; `true` if it
/// worked.
pub fn mount() -> bool {
    std::process::Command::new("mount")
        .args(["-t", "tracefs", "nodev", MOUNT_POINTS[0]])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// An event's id and the text of its `format` file (`events/GROUP/EVENT/` in tracefs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFormat {
    /// The event's directory.
    pub dir: String,
    /// Its tracepoint id (`perf_event_attr.config`).
    pub id: u64,
    /// The `format` file.
    pub text: String,
}

/// Why an event's files could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// The directory or one of its files could not be read (missing, or not root).
    #[error("cannot read {dir}: {error}")]
    Unreadable {
        /// The event's directory.
        dir: String,
        /// The error (part of the message).
        error: std::io::Error,
    },
    /// `id` holds no number.
    #[error("{dir}/id holds no number")]
    BadId {
        /// The event's directory.
        dir: String,
    },
}

impl EventFormat {
    /// Reads `events/{group}/{event}/id` and `format` below the tracefs mount `base`.
    pub fn read(base: &str, group: &str, event: &str) -> Result<EventFormat, FormatError> {
        let dir = format!("{base}/events/{group}/{event}");
        let read = |file: &str| {
            std::fs::read_to_string(format!("{dir}/{file}")).map_err(|error| {
                FormatError::Unreadable {
                    dir: dir.clone(),
                    error,
                }
            })
        };
        let (id, text) = (read("id")?, read("format")?);
        let id = id
            .trim()
            .parse()
            .map_err(|_| FormatError::BadId { dir: dir.clone() })?;
        Ok(EventFormat { dir, id, text })
    }

    /// The offset of field `name` in this event's raw record.
    pub fn offset(&self, name: &str) -> Option<usize> {
        field_offset(&self.text, name)
    }
}

/// The offset of field `name` in the text of a tracepoint `format` file (`field:TYPE NAME;
/// offset:N; …`; a pointer's `*` may stick to the name).
pub fn field_offset(format: &str, name: &str) -> Option<usize> {
    format.lines().find_map(|line| {
        let mut parts = line.trim().split(';').map(str::trim);
        let decl = parts.next()?.strip_prefix("field:")?;
        let last = decl.split_whitespace().last()?.trim_start_matches('*');
        (last == name).then(|| parts.find_map(|p| p.strip_prefix("offset:")?.parse().ok()))?
    })
}

#[cfg(test)]
mod tests {
    use super::field_offset;

    const EXIT_FORMAT: &str = "name: sys_exit\nID: 442\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
        \tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n\
        \tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n\n\
        print fmt: \"NR %ld = %ld\", REC->id, REC->ret\n";

    #[test]
    fn offsets_come_from_the_format_file() {
        assert_eq!(field_offset(EXIT_FORMAT, "id"), Some(8));
        assert_eq!(field_offset(EXIT_FORMAT, "ret"), Some(16));
        assert_eq!(field_offset(EXIT_FORMAT, "common_pid"), Some(4));
        assert_eq!(field_offset(EXIT_FORMAT, "args"), None);
    }

    #[test]
    fn pointer_and_data_loc_fields_are_found_by_name() {
        let f = "\tfield:u32 * uaddr;\toffset:16;\tsize:8;\tsigned:0;\n\
                 \tfield:u32 *uaddr2;\toffset:24;\tsize:8;\tsigned:0;\n\
                 \tfield:__data_loc char[] path;\toffset:32;\tsize:4;\tsigned:0;\n";
        assert_eq!(field_offset(f, "uaddr"), Some(16));
        assert_eq!(field_offset(f, "uaddr2"), Some(24));
        assert_eq!(field_offset(f, "path"), Some(32));
    }
}
