//! Thin, checked wrappers over the Linux calls the emulator's loop needs: the monotonic
//! clock, an absolute `timerfd`, `epoll`, non-blocking reads and writes, and `setns`.
//!
//! Every wrapper turns a failing call into an [`std::io::Error`] that names the call, so a
//! refusal (no root, no TUN) reaches the user as one line. Nothing here keeps state beyond
//! the file descriptors it returns, each owned by an [`OwnedFd`] (closed on drop).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// `Err` with the call's name and the OS error, if `ret` is negative.
fn check(ret: libc::c_int, call: &str) -> io::Result<libc::c_int> {
    if ret < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{call}: {e}")))
    } else {
        Ok(ret)
    }
}

/// Nanoseconds of `CLOCK_MONOTONIC` (never jumps with the wall clock).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sets this thread's timer slack to 1 ns (the default 50 µs shows in every wake-up).
pub fn tight_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long and touches only this thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}

/// Runs this thread under `SCHED_FIFO` at `priority` (1-99), with `SCHED_RESET_ON_FORK` so
/// that the programs it starts run under the normal policy. The kernel's real-time
/// throttling stays as the host has it.
pub fn realtime(priority: i32) -> io::Result<()> {
    let param = libc::sched_param { sched_priority: priority };
    // SAFETY: `param` is valid for the call; 0 is this thread.
    check(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, &param) }, "sched_setscheduler(SCHED_FIFO)")?;
    Ok(())
}

/// A `timerfd` on `CLOCK_MONOTONIC`, armed with absolute deadlines.
pub struct TimerFd {
    fd: OwnedFd,
}

impl TimerFd {
    /// A disarmed, non-blocking timer.
    pub fn new() -> io::Result<TimerFd> {
        // SAFETY: plain syscall; the returned descriptor is owned below.
        let fd = check(unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) }, "timerfd_create")?;
        // SAFETY: `fd` was just returned by the kernel and is owned by nobody else.
        Ok(TimerFd { fd: unsafe { OwnedFd::from_raw_fd(fd) } })
    }

    /// Fires at `deadline_ns` of `CLOCK_MONOTONIC` (at once if it has passed); `None` disarms.
    pub fn arm_at(&self, deadline_ns: Option<u64>) -> io::Result<()> {
        let value = match deadline_ns {
            // A zero it_value disarms, so an absolute deadline of 0 becomes 1 ns.
            Some(ns) => libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000).max(1) as libc::c_long },
            None => libc::timespec { tv_sec: 0, tv_nsec: 0 },
        };
        let spec = libc::itimerspec { it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 }, it_value: value };
        // SAFETY: `spec` is a valid itimerspec and the old value is not asked for.
        check(unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) }, "timerfd_settime")?;
        Ok(())
    }

    /// Clears the expiry count (after epoll reported the timer readable).
    pub fn clear(&self) {
        let mut buf = [0u8; 8];
        // SAFETY: reads at most 8 bytes into `buf`; EAGAIN (nothing to clear) is fine.
        unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    }

    /// Its descriptor, for epoll.
    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// An epoll instance; each registered descriptor carries a `u64` token.
pub struct Epoll {
    fd: OwnedFd,
    events: Vec<libc::epoll_event>,
}

impl Epoll {
    /// A new instance reporting up to `capacity` events per wait.
    pub fn new(capacity: usize) -> io::Result<Epoll> {
        // SAFETY: plain syscall; the descriptor is owned below.
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) }, "epoll_create1")?;
        // SAFETY: fresh descriptor owned by nobody else.
        Ok(Epoll { fd: unsafe { OwnedFd::from_raw_fd(fd) }, events: vec![libc::epoll_event { events: 0, u64: 0 }; capacity.max(1)] })
    }

    /// Watches `fd` for readability, reporting `token`.
    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: token };
        // SAFETY: `ev` is valid for the call; `fd` is open (owned by the caller).
        check(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) }, "epoll_ctl")?;
        Ok(())
    }

    /// Waits up to `timeout_ms` (-1: forever) and returns the ready tokens.
    pub fn wait(&mut self, timeout_ms: i32, ready: &mut Vec<u64>) -> io::Result<()> {
        ready.clear();
        // SAFETY: `events` has room for `len` entries, which the kernel fills.
        let n = unsafe { libc::epoll_wait(self.fd.as_raw_fd(), self.events.as_mut_ptr(), self.events.len() as libc::c_int, timeout_ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(());
            }
            return Err(io::Error::new(e.kind(), format!("epoll_wait: {e}")));
        }
        ready.extend(self.events[..n as usize].iter().map(|e| e.u64));
        Ok(())
    }
}

/// Reads one datagram (a whole IP packet from a TUN) into `buf`; `Ok(None)` when none waits.
pub fn read_packet(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: the kernel writes at most `buf.len()` bytes into `buf`.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(io::Error::new(e.kind(), format!("read from a TUN device: {e}"))),
        };
    }
    Ok(Some(n as usize))
}

/// Writes one whole IP packet to a TUN; `false` when the device refused it (counted by the
/// caller as a drop outside the models).
pub fn write_packet(fd: RawFd, bytes: &[u8]) -> bool {
    // SAFETY: `bytes` is valid for reads of its length.
    let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    n == bytes.len() as isize
}

/// Moves this thread into the network namespace behind `ns` (a descriptor of
/// `/proc/PID/ns/net`).
pub fn enter_netns(ns: RawFd) -> io::Result<()> {
    // SAFETY: plain syscall on an open descriptor.
    check(unsafe { libc::setns(ns, libc::CLONE_NEWNET) }, "setns into a network namespace")?;
    Ok(())
}

/// Kills process `pid` with `signal`; a process already gone is not an error.
pub fn kill(pid: i32, signal: libc::c_int) {
    // SAFETY: plain syscall; a stale pid only yields ESRCH.
    unsafe { libc::kill(pid, signal) };
}

/// Whether the effective user is root.
pub fn is_root() -> bool {
    // SAFETY: geteuid never fails.
    unsafe { libc::geteuid() == 0 }
}
