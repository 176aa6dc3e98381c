//! The thread peers of `os.ctxsw`: an echo thread on the other end of two pipes, a futex
//! hand-off thread, and a sched_yield partner. Each stops and is joined when dropped, even
//! when the experiment is interrupted. The forked echo process is the shared one in
//! [`crate::experiments::peer`]. Depends on `sysmeter-sys` and that peer module only.

use std::fs::File;
use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::thread::JoinHandle;

use sysmeter_sys::{futex, sched};

use crate::experiments::peer::{self, Near};
use crate::harness::ExperimentError;

/// An echo thread; joined on drop (closing our ends makes its read return EOF).
pub struct EchoThread {
    ends: Option<Near>,
    handle: Option<JoinHandle<()>>,
}

impl EchoThread {
    /// Start a thread echoing `msg_len`-byte messages, pinned to `cpu`.
    pub fn start(msg_len: usize, cpu: Option<usize>) -> Result<EchoThread, ExperimentError> {
        let (near, far) = peer::pipes()?;
        let (req_r, rep_w) = far.split()?;
        let (mut req_r, mut rep_w) = (File::from(req_r), File::from(rep_w));
        let handle = std::thread::Builder::new()
            .name("echo".into())
            .spawn(move || {
                if let Some(c) = cpu {
                    let _ = sched::pin_current_thread(c);
                }
                let mut buf = vec![0u8; msg_len.max(1)];
                while req_r.read_exact(&mut buf).is_ok() && rep_w.write_all(&buf).is_ok() {}
            })
            .map_err(|e| ExperimentError::io("start the echo thread", e))?;
        Ok(EchoThread {
            ends: Some(near),
            handle: Some(handle),
        })
    }

    /// Our ends of the pipes.
    pub fn ends(&self) -> Option<&Near> {
        self.ends.as_ref()
    }
}

impl Drop for EchoThread {
    fn drop(&mut self) {
        self.ends = None;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

const MAIN_TURN: u32 = 0;
const PEER_TURN: u32 = 1;
const QUIT: u32 = 2;

/// A thread that hands control back over a futex word each time it is handed it.
pub struct FutexPeer {
    word: Arc<AtomicU32>,
    handle: Option<JoinHandle<()>>,
}

impl FutexPeer {
    /// Start the peer pinned to `cpu`.
    pub fn start(cpu: Option<usize>) -> Result<FutexPeer, ExperimentError> {
        let word = Arc::new(AtomicU32::new(MAIN_TURN));
        let w = Arc::clone(&word);
        let handle = std::thread::Builder::new()
            .name("futex-peer".into())
            .spawn(move || {
                if let Some(c) = cpu {
                    let _ = sched::pin_current_thread(c);
                }
                loop {
                    match w.load(Ordering::Acquire) {
                        QUIT => return,
                        PEER_TURN => {
                            w.store(MAIN_TURN, Ordering::Release);
                            futex::wake(&w, 1);
                        }
                        _ => futex::wait(&w, MAIN_TURN),
                    }
                }
            })
            .map_err(|e| ExperimentError::io("start the futex peer", e))?;
        Ok(FutexPeer {
            word,
            handle: Some(handle),
        })
    }

    /// Hand control to the peer and wait until it hands it back.
    pub fn round_trip(&self) {
        self.word.store(PEER_TURN, Ordering::Release);
        futex::wake(&self.word, 1);
        while self.word.load(Ordering::Acquire) == PEER_TURN {
            futex::wait(&self.word, PEER_TURN);
        }
    }
}

impl Drop for FutexPeer {
    fn drop(&mut self) {
        self.word.store(QUIT, Ordering::Release);
        futex::wake(&self.word, 1);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// A thread that calls sched_yield in a loop, counting its calls, until dropped.
pub struct YieldPeer {
    stop: Arc<AtomicBool>,
    count: Arc<AtomicU64>,
    handle: Option<JoinHandle<()>>,
}

impl YieldPeer {
    /// Start the peer pinned to `cpu`.
    pub fn start(cpu: Option<usize>) -> Result<YieldPeer, ExperimentError> {
        let stop = Arc::new(AtomicBool::new(false));
        let count = Arc::new(AtomicU64::new(0));
        let (s, c) = (Arc::clone(&stop), Arc::clone(&count));
        let handle = std::thread::Builder::new()
            .name("yield-peer".into())
            .spawn(move || {
                if let Some(cpu) = cpu {
                    let _ = sched::pin_current_thread(cpu);
                }
                while !s.load(Ordering::Relaxed) {
                    sched::yield_now();
                    c.fetch_add(1, Ordering::Relaxed);
                }
            })
            .map_err(|e| ExperimentError::io("start the yield peer", e))?;
        Ok(YieldPeer {
            stop,
            count,
            handle: Some(handle),
        })
    }

    /// How many times the peer has yielded so far.
    pub fn yields(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }
}

impl Drop for YieldPeer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
