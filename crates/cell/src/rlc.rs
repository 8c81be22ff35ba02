//! The transmitting side of an RLC UM entity (3GPP TS 36.322 §5.1.2.1 and §6.2.1.3) for one
//! bearer, as ns-3 LENA's `LteRlcUm` models it.
//!
//! * **Buffer.** SDUs (PDCP PDUs) are queued whole in a drop-tail buffer that counts the bytes
//!   not yet sent. An SDU that would take it above its capacity is dropped and counted with the
//!   cause [`CellDropCause::RlcBufferFull`](crate::CellDropCause::RlcBufferFull) (LENA's
//!   `TxDrop`). LENA's default capacity (`MaxTxBufferSize`) is 10 240 bytes; the study set
//!   524 288 bytes (512 kB), [`STUDY_MAX_TX_BUFFER_BYTES`].
//! * **Segmentation and concatenation.** At each transmission opportunity (a TB of B bytes
//!   granted to the bearer), [`UmTxBuffer::pull`] builds one UMD PDU of at most B bytes: SDUs
//!   from the head of the queue, the last one segmented if it does not fit. Its header is the
//!   fixed part with the 10-bit SN (2 bytes: FI, E, SN) plus one 11-bit length indicator and
//!   its E bit for every data field but the last (12 bits each, padded to a whole byte), as
//!   36.322 §6.2.1.3 lays out: 2, 4, 5, 7, 8, ... bytes for 1, 2, 3, 4, 5, ... data fields. A
//!   length indicator holds at most 2047 bytes, so a longer data field can only be the PDU's
//!   last. No PDU is built if the grant cannot carry one data byte after the header. MAC
//!   subheaders and padding are not modelled: the whole TB is the RLC PDU.
//! * **Buffer status.** [`UmTxBuffer::status`] reports the bytes queued, a header estimate of
//!   2 bytes per queued SDU (what the scheduler adds on top of the data) and the head-of-line
//!   delay: how long the oldest byte still queued has waited.
//!
//! Sizes are bytes; times are microseconds on the caller's clock.

use std::collections::VecDeque;

use crate::error::CellError;

/// LENA's default transmission buffer (`LteRlcUm::MaxTxBufferSize`), in bytes.
pub const LENA_MAX_TX_BUFFER_BYTES: u64 = 10_240;
/// The study's transmission buffer (512 kB), in bytes.
pub const STUDY_MAX_TX_BUFFER_BYTES: u64 = 524_288;
/// The UMD PDU fixed header with a 10-bit SN, in bytes.
pub const UM_FIXED_HEADER_BYTES: u32 = 2;
/// The largest data field a length indicator can hold (11 bits), in bytes.
pub const MAX_LI_BYTES: u32 = 2047;
/// Header bytes the buffer status counts per queued SDU.
pub const HEADER_ESTIMATE_PER_SDU: u64 = 2;
/// The UM sequence number space with a 10-bit SN.
pub const UM_SN_MODULUS: u16 = 1024;

/// The header of a UMD PDU with `fields` (≥ 1) data fields, in bytes: 2 + ⌈1.5·(fields − 1)⌉.
pub fn um_header_bytes(fields: u32) -> u32 {
    UM_FIXED_HEADER_BYTES + (12 * fields.saturating_sub(1)).div_ceil(8)
}

/// A part of one SDU carried in a PDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UmSegment {
    /// The SDU's id, as [`UmTxBuffer::enqueue`] returned it.
    pub sdu_id: u64,
    /// The SDU's whole size.
    pub sdu_bytes: u32,
    /// Where this part starts within the SDU.
    pub offset: u32,
    /// This part's length.
    pub len: u32,
}

impl UmSegment {
    /// True if this part ends its SDU.
    pub fn ends_sdu(&self) -> bool {
        self.offset + self.len == self.sdu_bytes
    }
}

/// One UMD PDU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UmPdu {
    /// Its sequence number (0..1024).
    pub sn: u16,
    /// Its header, in bytes.
    pub header_bytes: u32,
    /// The SDU parts it carries, in order.
    pub segments: Vec<UmSegment>,
}

impl UmPdu {
    /// SDU bytes carried.
    pub fn data_bytes(&self) -> u32 {
        self.segments.iter().map(|s| s.len).sum()
    }

    /// Header plus data, in bytes.
    pub fn size(&self) -> u32 {
        self.header_bytes + self.data_bytes()
    }
}

/// What the scheduler learns of the buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RlcBufferStatus {
    /// SDU bytes not yet sent.
    pub queued_bytes: u64,
    /// SDUs with bytes not yet sent.
    pub queued_sdus: u64,
    /// Bytes to send, headers estimated: `queued_bytes` + 2 per queued SDU.
    pub tx_queue_bytes: u64,
    /// How long the head SDU has waited, in µs (0 if the buffer is empty).
    pub hol_delay_us: u64,
}

/// Counts since the start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RlcCounters {
    /// SDUs offered.
    pub offered_sdus: u64,
    /// Bytes of those.
    pub offered_bytes: u64,
    /// SDUs dropped because they did not fit (`rlc_buffer_full`).
    pub dropped_sdus: u64,
    /// Bytes of those.
    pub dropped_bytes: u64,
    /// PDUs built.
    pub pdus: u64,
    /// SDU bytes sent in PDUs.
    pub sent_bytes: u64,
    /// Header bytes of those PDUs.
    pub header_bytes: u64,
}

#[derive(Clone, Debug)]
struct Sdu {
    id: u64,
    size: u32,
    sent: u32,
    arrival_us: u64,
}

/// The transmitting side of one RLC UM bearer.
#[derive(Clone, Debug)]
pub struct UmTxBuffer {
    capacity: u64,
    queue: VecDeque<Sdu>,
    queued_bytes: u64,
    next_id: u64,
    next_sn: u16,
    counters: RlcCounters,
}

impl UmTxBuffer {
    /// An empty buffer of `capacity_bytes` (1 byte to 1 GiB).
    pub fn new(capacity_bytes: u64) -> Result<UmTxBuffer, CellError> {
        if capacity_bytes == 0 || capacity_bytes > 1 << 30 {
            return Err(CellError::out_of_range("rlc.max_tx_buffer_bytes", capacity_bytes as f64, "an integer in [1, 2^30] bytes"));
        }
        Ok(UmTxBuffer {
            capacity: capacity_bytes,
            queue: VecDeque::new(),
            queued_bytes: 0,
            next_id: 0,
            next_sn: 0,
            counters: RlcCounters::default(),
        })
    }

    /// The capacity, in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The counts since the start.
    pub fn counters(&self) -> RlcCounters {
        self.counters
    }

    /// Offers an SDU of `bytes` (≥ 1) arriving at `now_us`: `Some(id)` if queued, `None` if it
    /// did not fit and was dropped.
    pub fn enqueue(&mut self, bytes: u32, now_us: u64) -> Result<Option<u64>, CellError> {
        if bytes == 0 {
            return Err(CellError::out_of_range("sdu_bytes", 0.0, "an integer ≥ 1 byte"));
        }
        self.counters.offered_sdus += 1;
        self.counters.offered_bytes += bytes as u64;
        if self.queued_bytes + bytes as u64 > self.capacity {
            self.counters.dropped_sdus += 1;
            self.counters.dropped_bytes += bytes as u64;
            return Ok(None);
        }
        let id = self.next_id;
        self.next_id += 1;
        self.queue.push_back(Sdu { id, size: bytes, sent: 0, arrival_us: now_us });
        self.queued_bytes += bytes as u64;
        Ok(Some(id))
    }

    /// The ids of the SDUs no byte of which has been handed to MAC yet.
    pub fn unsent_ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.queue.iter().filter(|s| s.sent == 0).map(|s| s.id)
    }

    /// The id of the oldest SDU not yet wholly handed to MAC, or the id the next SDU will take
    /// when none is left: every SDU with a smaller id has been transmitted.
    pub fn oldest_open_id(&self) -> u64 {
        self.queue.front().map_or(self.next_id, |s| s.id)
    }

    /// The buffer status at `now_us`.
    pub fn status(&self, now_us: u64) -> RlcBufferStatus {
        let n = self.queue.len() as u64;
        RlcBufferStatus {
            queued_bytes: self.queued_bytes,
            queued_sdus: n,
            tx_queue_bytes: self.queued_bytes + HEADER_ESTIMATE_PER_SDU * n,
            hol_delay_us: self.queue.front().map_or(0, |s| now_us.saturating_sub(s.arrival_us)),
        }
    }

    /// One PDU of at most `opportunity_bytes` for a transmission opportunity, or `None` if the
    /// buffer is empty or the opportunity cannot carry the header and one data byte.
    pub fn pull(&mut self, opportunity_bytes: u32) -> Option<UmPdu> {
        let mut segments: Vec<UmSegment> = Vec::new();
        let mut data = 0u32;
        while let Some(sdu) = self.queue.front_mut() {
            if let Some(prev) = segments.last() {
                if prev.len > MAX_LI_BYTES {
                    break;
                }
            }
            let header = um_header_bytes(segments.len() as u32 + 1);
            let room = opportunity_bytes.saturating_sub(header + data);
            if room == 0 {
                break;
            }
            let take = room.min(sdu.size - sdu.sent);
            segments.push(UmSegment { sdu_id: sdu.id, sdu_bytes: sdu.size, offset: sdu.sent, len: take });
            sdu.sent += take;
            data += take;
            self.queued_bytes -= take as u64;
            if sdu.sent == sdu.size {
                self.queue.pop_front();
            } else {
                break;
            }
        }
        if segments.is_empty() {
            return None;
        }
        let header_bytes = um_header_bytes(segments.len() as u32);
        let sn = self.next_sn;
        self.next_sn = (self.next_sn + 1) % UM_SN_MODULUS;
        self.counters.pdus += 1;
        self.counters.sent_bytes += data as u64;
        self.counters.header_bytes += header_bytes as u64;
        Some(UmPdu { sn, header_bytes, segments })
    }
}
