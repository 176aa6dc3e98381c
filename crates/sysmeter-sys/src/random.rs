//! Random bytes from the kernel (getrandom(2)), for secrets another host must not guess:
//! the session cookies of `sysmeter serve`. A userspace PRNG seeded from the clock or the
//! pid would let an observer of a few cookies predict the next ones.

/// Fill `buf` from the kernel's random source (blocking only until it is initialised, once
/// after boot).
pub fn fill(buf: &mut [u8]) -> std::io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        // SAFETY: the kernel writes at most `rest.len()` bytes into `rest`, which is valid,
        // writable memory that we borrow mutably for the duration of the call.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if n < 0 {
            let e = crate::last_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        done += n as usize;
    }
    Ok(())
}

/// A random `u64` from [`fill`].
pub fn u64() -> std::io::Result<u64> {
    let mut b = [0u8; 8];
    fill(&mut b)?;
    Ok(u64::from_ne_bytes(b))
}

#[cfg(test)]
mod tests {
    #[test]
    fn draws_differ_and_fill_whole_buffers() {
        let a = super::u64().expect("getrandom");
        let b = super::u64().expect("getrandom");
        assert_ne!(a, b, "two 64-bit draws collided");
        let mut big = [0u8; 4096];
        super::fill(&mut big).expect("getrandom");
        assert!(
            big.iter().filter(|&&x| x == 0).count() < 200,
            "mostly zeros"
        );
    }
}
