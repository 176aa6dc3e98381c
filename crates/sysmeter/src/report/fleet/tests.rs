//! The fleet renderers on a fleet built from the fixture run: five hosts, one twice as slow
//! in `os.syscall` on another kernel.
