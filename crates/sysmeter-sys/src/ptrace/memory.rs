//! Reading a tracee's memory: the NUL-terminated strings system calls take as path
//! arguments, with `process_vm_readv` (one system call per page touched; the tracer of a
//! stopped tracee passes the kernel's ptrace access check).

use std::io;

/// Bytes read per step: never across a page boundary, since the next page may be unmapped
/// and `process_vm_readv` would then fail for the whole read.
const PAGE: u64 = 4096;

/// Reads the NUL-terminated string at `addr` in process or thread `tid`, at most `max`
/// bytes (without the NUL). A string longer than `max` is cut at `max`; `Ok(None)` when
/// `addr` is 0 (a NULL argument).
pub fn read_c_string(tid: i32, addr: u64, max: usize) -> io::Result<Option<Vec<u8>>> {
    if addr == 0 {
        return Ok(None);
    }
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < max {
        let step = ((PAGE - at % PAGE) as usize).min(max - out.len());
        let mut buf = vec![0u8; step];
        let local = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: step,
        };
        let remote = libc::iovec {
            iov_base: at as *mut libc::c_void,
            iov_len: step,
        };
        // SAFETY: `local` describes `buf`, valid and writable for `step` bytes; the remote
        // address is only read by the kernel, which checks it against the tracee's mappings.
        let n = unsafe { libc::process_vm_readv(tid, &local, 1, &remote, 1, 0) };
        if n < 0 {
            return Err(crate::last_error());
        }
        let n = n as usize;
        if let Some(end) = buf[..n].iter().position(|&b| b == 0) {
            out.extend_from_slice(&buf[..end]);
            return Ok(Some(out));
        }
        out.extend_from_slice(&buf[..n]);
        if n < step {
            break;
        }
        at += n as u64;
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_own_strings_across_pages_and_cuts_at_max() {
        let me = std::process::id() as i32;
        let s = c"/usr/lib/x86_64-linux-gnu/libfoo.so";
        let got = read_c_string(me, s.as_ptr() as u64, 4096).expect("read");
        assert_eq!(got.as_deref(), Some(s.to_bytes()));
        let cut = read_c_string(me, s.as_ptr() as u64, 4).expect("read");
        assert_eq!(cut.as_deref(), Some(&b"/usr"[..]));
        assert_eq!(read_c_string(me, 0, 10).expect("null"), None);
        // A string that straddles a page boundary.
        let mut big = vec![b'a'; 3 * PAGE as usize];
        let start = (PAGE - big.as_ptr() as u64 % PAGE) as usize + PAGE as usize - 5;
        big[start + 10] = 0;
        let got = read_c_string(me, big[start..].as_ptr() as u64, 4096).expect("read");
        assert_eq!(got.map(|v| v.len()), Some(10));
        assert!(read_c_string(me, 8, 10).is_err(), "unmapped page");
    }
}
