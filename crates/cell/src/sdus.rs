//! The IP packets a bearer holds while the cell carries them, by RLC SDU id.
//!
//! The RLC transmission buffer gives SDU ids in order ([`crate::rlc::UmTxBuffer`]), and SDUs
//! leave (delivered, or dropped by HARQ or t-Reordering) roughly in that order, so the packets
//! sit in a deque indexed by id − the oldest id held: an insert is a push at the back and a
//! removal empties its slot and drops the empty slots at the front. No tree, no allocation per
//! packet once the deque has grown to the bearer's window.

use std::collections::VecDeque;

use multiconn_core::Packet;

/// Packets by SDU id; ids are inserted in increasing order.
#[derive(Default)]
pub struct SduPackets {
    /// The id of `slots[0]`.
    first: u64,
    slots: VecDeque<Option<Packet>>,
    held: usize,
}

impl SduPackets {
    /// Holds `pkt` under `id`, which must be above every id inserted before (ids skipped are
    /// empty slots). An id at or below an earlier one is refused and the packet handed back.
    pub fn insert(&mut self, id: u64, pkt: Packet) -> Result<(), Packet> {
        if self.slots.is_empty() {
            self.first = id;
        }
        let Some(index) = id.checked_sub(self.first).map(|i| i as usize).filter(|&i| i >= self.slots.len()) else {
            return Err(pkt);
        };
        self.slots.resize_with(index, || None);
        self.slots.push_back(Some(pkt));
        self.held += 1;
        Ok(())
    }

    /// Takes every packet held, with its id, in id order.
    pub fn drain(&mut self) -> Vec<(u64, Packet)> {
        let first = self.first;
        let out = self.slots.drain(..).enumerate().filter_map(|(i, p)| p.map(|p| (first + i as u64, p))).collect();
        self.held = 0;
        out
    }

    /// Takes the packet held under `id`, if any.
    pub fn remove(&mut self, id: u64) -> Option<Packet> {
        let index = usize::try_from(id.checked_sub(self.first)?).ok()?;
        let pkt = self.slots.get_mut(index)?.take()?;
        self.held -= 1;
        while self.slots.front().is_some_and(Option::is_none) {
            self.slots.pop_front();
            self.first += 1;
        }
        Some(pkt)
    }

    /// The packet held under `id`, if any, to change in place (an L4S mark).
    pub fn get_mut(&mut self, id: u64) -> Option<&mut Packet> {
        let index = usize::try_from(id.checked_sub(self.first)?).ok()?;
        self.slots.get_mut(index)?.as_mut()
    }

    /// Whether no packet is held.
    pub fn is_empty(&self) -> bool {
        self.held == 0
    }

    /// The number of packets held.
    pub fn len(&self) -> usize {
        self.held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(id: u64) -> Packet {
        Packet::new(id, multiconn_core::FlowId(0), 100 + id as u32, id, multiconn_core::Time(0))
    }

    #[test]
    fn packets_come_back_by_id_in_any_order_and_the_front_is_trimmed() {
        let mut s = SduPackets::default();
        for id in [5, 6, 7, 9] {
            s.insert(id, pkt(id)).unwrap();
        }
        assert_eq!(s.len(), 4);
        assert_eq!(s.remove(7).map(|p| p.size), Some(107));
        assert!(s.remove(7).is_none());
        assert!(s.remove(8).is_none(), "a skipped id holds nothing");
        assert!(s.remove(4).is_none(), "below the oldest");
        assert!(s.remove(100).is_none(), "beyond the newest");
        assert_eq!(s.remove(5).map(|p| p.size), Some(105));
        assert_eq!((s.first, s.slots.len()), (6, 4), "slot 5 went, 6 holds the front");
        assert_eq!(s.remove(6).map(|p| p.size), Some(106));
        assert_eq!((s.first, s.slots.len()), (9, 1), "7 and 8 were empty");
        assert!(s.insert(9, pkt(9)).is_err(), "an id may not come twice");
        assert!(s.insert(3, pkt(3)).is_err(), "nor go back");
        assert_eq!(s.remove(9).map(|p| p.size), Some(109));
        assert!(s.is_empty());
        s.insert(20, pkt(20)).unwrap();
        assert_eq!(s.remove(20).map(|p| p.size), Some(120));
    }
}
