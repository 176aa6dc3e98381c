//! Symbolic names of errno values (`ENOENT`), for the error breakdown of a traced call, and
//! the kernel-internal restart codes a tracer can see (`ERESTARTSYS`…). The numbers are
//! those of x86_64 and aarch64 (asm-generic), which agree for everything listed. Pure.

/// errno values and their names.
#[rustfmt::skip]
const NAMES: &[(i64, &str)] = &[
    (1, "EPERM"), (2, "ENOENT"), (3, "ESRCH"), (4, "EINTR"), (5, "EIO"), (6, "ENXIO"),
    (7, "E2BIG"), (8, "ENOEXEC"), (9, "EBADF"), (10, "ECHILD"), (11, "EAGAIN"),
    (12, "ENOMEM"), (13, "EACCES"), (14, "EFAULT"), (16, "EBUSY"), (17, "EEXIST"),
    (18, "EXDEV"), (19, "ENODEV"), (20, "ENOTDIR"), (21, "EISDIR"), (22, "EINVAL"),
    (23, "ENFILE"), (24, "EMFILE"), (25, "ENOTTY"), (26, "ETXTBSY"), (27, "EFBIG"),
    (28, "ENOSPC"), (29, "ESPIPE"), (30, "EROFS"), (31, "EMLINK"), (32, "EPIPE"),
    (34, "ERANGE"), (35, "EDEADLK"), (36, "ENAMETOOLONG"), (38, "ENOSYS"), (39, "ENOTEMPTY"),
    (40, "ELOOP"), (61, "ENODATA"), (62, "ETIME"), (75, "EOVERFLOW"), (88, "ENOTSOCK"),
    (95, "EOPNOTSUPP"), (97, "EAFNOSUPPORT"), (98, "EADDRINUSE"), (99, "EADDRNOTAVAIL"),
    (101, "ENETUNREACH"), (104, "ECONNRESET"), (105, "ENOBUFS"), (106, "EISCONN"),
    (107, "ENOTCONN"), (110, "ETIMEDOUT"), (111, "ECONNREFUSED"), (113, "EHOSTUNREACH"),
    (114, "EALREADY"), (115, "EINPROGRESS"), (512, "ERESTARTSYS"), (513, "ERESTARTNOINTR"),
    (514, "ERESTARTNOHAND"), (516, "ERESTART_RESTARTBLOCK"),
];

/// `ENOENT` for 2; `errno <n>` for a number not listed.
pub fn name(errno: i64) -> String {
    NAMES
        .iter()
        .find(|(n, _)| *n == errno)
        .map_or_else(|| format!("errno {errno}"), |(_, name)| name.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn common_errnos_have_names() {
        assert_eq!(super::name(2), "ENOENT");
        assert_eq!(super::name(9), "EBADF");
        assert_eq!(super::name(512), "ERESTARTSYS");
        assert_eq!(super::name(4000), "errno 4000");
        assert_eq!(libc::ENOENT, 2);
        assert_eq!(libc::EBADF, 9);
    }
}
