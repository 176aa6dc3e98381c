//! The seam through which a live view counts system calls without naming the diagnosis
//! that counts them: `trace`'s in-kernel backend implements [`CallCounter`], the command
//! hands it to `live`, as `observe::lookups` lets `run` use `trace`'s tracer.
//!
//! Depends on nothing.

use std::collections::HashMap;

/// System calls counted in the kernel, read once a second.
pub trait CallCounter: Send {
    /// Counts the calls of process `pid` from now on (and of the processes it starts).
    fn target(&mut self, pid: i32);
    /// Calls per name since counting began.
    fn read(&mut self) -> HashMap<String, u64>;
}
