//! TUN devices (Linux `Documentation/networking/tuntap.rst`): one per (host, flow, path), opened
//! inside the host's network namespace and read and written by the emulator.
//!
//! `IFF_TUN | IFF_NO_PI`: each `read` is one whole IP packet as the host's stack sent it, each
//! `write` injects one into that stack, with no link-layer header and no packet-information
//! prefix. The device is point-to-point (`ip addr add LOCAL peer REMOTE`), so the kernel
//! routes exactly the remote address of its flow and path through it and nothing else; it
//! vanishes when its descriptor closes.

use std::fs::{File, OpenOptions};
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

use crate::sandbox::Host;

/// `ioctl` request that attaches a descriptor to a TUN device (`_IOW('T', 202, int)`).
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

/// The `struct ifreq` prefix `TUNSETIFF` reads: the name and the flags.
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// An open TUN device inside a host.
pub struct Tun {
    file: File,
    /// Its name inside the host.
    pub name: String,
}

/// What a TUN needs to be configured: its name, addresses and MTU.
#[derive(Debug, Clone)]
pub struct TunSpec {
    /// Device name (at most 15 bytes).
    pub name: String,
    /// The host's own address on it.
    pub local: Ipv4Addr,
    /// The address at the far end (the other host's address on the same flow and path).
    pub peer: Ipv4Addr,
    /// The largest IP packet.
    pub mtu: u32,
}

impl Tun {
    /// Creates `spec` inside `host`, non-blocking, up, addressed, with a long transmit queue
    /// (a burst must not be dropped before the emulator reads it) and without IPv6 (whose
    /// router and neighbour solicitations would otherwise become emulated traffic).
    pub fn create(host: &Host, spec: &TunSpec) -> io::Result<Tun> {
        assert!(spec.name.len() < libc::IFNAMSIZ, "TUN names are generated short");
        let file = host.inside(|| {
            // Written from inside the namespace: /proc/sys/net is the namespace's own.
            for knob in ["default", "all"] {
                let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{knob}/disable_ipv6"), "1");
            }
            let file = OpenOptions::new().read(true).write(true).custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC).open("/dev/net/tun")
                .map_err(|e| io::Error::new(e.kind(), format!("cannot open /dev/net/tun: {e}")))?;
            let mut req = IfReq { name: [0; libc::IFNAMSIZ], flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short, _pad: [0; 22] };
            req.name[..spec.name.len()].copy_from_slice(spec.name.as_bytes());
            // SAFETY: `req` is a valid ifreq prefix that outlives the call.
            if unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF, &mut req) } < 0 {
                let e = io::Error::last_os_error();
                return Err(io::Error::new(e.kind(), format!("TUNSETIFF {}: {e}", spec.name)));
            }
            Ok(file)
        })?;
        host.ip_batch(&[
            format!("link set dev {} mtu {} txqueuelen 10000 up", spec.name, spec.mtu),
            format!("addr add {} peer {} dev {}", spec.local, spec.peer, spec.name),
        ])?;
        Ok(Tun { file, name: spec.name.clone() })
    }

    /// Its descriptor.
    pub fn raw(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}
