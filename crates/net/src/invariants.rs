//! Invariant checks of the network, on request ([`Network::check_invariants`]): what every
//! link direction and every split bearer must never do, whatever its model.
//!
//! * **Conservation, per link direction.** Every packet offered to a link is counted in
//!   (packets and bytes): refused at the door, it is counted dropped at once; accepted, it is
//!   inside until the link delivers it, drops it, or gives it back as a discarded PDCP copy.
//!   A packet coming out that is not inside (a duplicate, or one that never went in) is a
//!   violation at once. At the end of the run what is still inside must be what the link says
//!   it holds ([`Link::held`]: waiting, in transmission, propagating); less is a packet the
//!   link lost without reporting it.
//! * **No delivery before its floor.** A packet delivered at `t` entered at `t0` must have
//!   `t >= t0 + floor(size)`, the floor its [`HopModel::transit_floor`] gives (serialization at
//!   the fastest rate plus the smallest propagation delay; exact for a constant rate and
//!   delay). A link built without a model ([`Network::with_links`]) is held to causality only
//!   (`t >= t0`). No output may be dated after the instant it was polled.
//! * **PDCP order, per split bearer.** The receiving entity delivers COUNTs upwards strictly
//!   increasing: never twice, never out of order (gaps are COUNTs t-Reordering gave up on).
//!   A receiver configured to deliver on arrival (`reordering = false`, TS 38.323
//!   outOfOrderDelivery) is held to "never twice" only, within the last window of COUNTs
//!   (half the SN space, all a receiver can tell apart).
//!
//! The checks observe only: they draw no random numbers and schedule nothing, so a run's
//! results are the same with them on or off. Their cost is a few counters per link and the
//! ids and entry times of the packets inside each link (found at the front of the list for a
//! first-in first-out link). The first violation is kept; the driver reads it
//! ([`Network::violation`]) and ends the run. Cells are not checked.
//!
//! [`Network::check_invariants`]: crate::Network::check_invariants
//! [`Network::violation`]: crate::Network::violation
//! [`Network::with_links`]: crate::Network::with_links
//! [`Link::held`]: multiconn_link::Link::held

use std::collections::{BTreeSet, VecDeque};
use std::fmt;
use std::sync::Arc;

use multiconn_core::{Dur, Packet, Time};
use multiconn_link::{Held, Link};

use crate::element::HopModel;

/// A broken invariant: which element, when, and what it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The virtual instant it was seen at.
    pub at: Time,
    /// The element (e.g. `link bottleneck (server -> client)`, `split dc, flow f, path 0`).
    pub entity: String,
    /// What happened, with the numbers.
    pub what: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {:.9} s: {}", self.entity, self.at.as_secs_f64(), self.what)
    }
}

/// One packet inside a link: its id, size and when it entered.
#[derive(Debug, Clone, Copy)]
struct Inside {
    id: u64,
    size: u32,
    entered: Time,
}

/// The counts of one link direction.
struct LinkTally {
    name: String,
    model: Option<Arc<dyn HopModel>>,
    /// Offered to the link (refused ones included).
    entered: Held,
    delivered: Held,
    /// Refused at the door or dropped inside.
    dropped: Held,
    /// Given back as discarded PDCP copies.
    discarded: Held,
    /// The packets inside, in order of entry.
    inside: VecDeque<Inside>,
}

impl LinkTally {
    /// Takes the packet `pkt` out of the list of those inside; searches from the front for a
    /// delivery (first in, first out) and from the back for a drop (a flush takes the newest).
    fn take(&mut self, pkt: &Packet, from_back: bool) -> Option<Inside> {
        let i = if from_back { self.inside.iter().rposition(|p| p.id == pkt.id) } else { self.inside.iter().position(|p| p.id == pkt.id) }?;
        self.inside.remove(i)
    }

    fn floor(&self, size: u32) -> Dur {
        self.model.as_ref().map_or(Dur::ZERO, |m| m.transit_floor(size))
    }
}

/// The order of the COUNTs one split bearer's receiving entity delivered.
struct BearerTally {
    name: String,
    /// In COUNT order (else on arrival, each once).
    in_order: bool,
    /// The receiving window (half the SN space): older COUNTs are forgotten.
    window: i64,
    /// The highest COUNT delivered.
    last: Option<i64>,
    /// Delivering on arrival: the COUNTs delivered within the window below `last`.
    seen: BTreeSet<i64>,
}

/// How one split bearer's receiving entity delivers: its name, whether in COUNT order, and
/// its window (half the SN space).
pub(crate) struct BearerCheck {
    pub(crate) name: String,
    pub(crate) in_order: bool,
    pub(crate) window: i64,
}

/// Every check's state (see the module documentation).
pub(crate) struct Checks {
    links: Vec<LinkTally>,
    bearers: Vec<BearerTally>,
    violation: Option<Violation>,
    /// Scratch space for the COUNTs a bearer released.
    pub(crate) counts: Vec<i64>,
}

impl Checks {
    /// Checks for links named `names` (their models, where known, give the floors) and
    /// bearers named `bearers`.
    pub(crate) fn new(names: Vec<String>, models: Vec<Option<Arc<dyn HopModel>>>, bearers: Vec<BearerCheck>) -> Checks {
        assert_eq!(names.len(), models.len(), "one name per link direction");
        let links = names
            .into_iter()
            .zip(models)
            .map(|(name, model)| LinkTally {
                name,
                model,
                entered: Held::default(),
                delivered: Held::default(),
                dropped: Held::default(),
                discarded: Held::default(),
                inside: VecDeque::new(),
            })
            .collect();
        let bearers = bearers.into_iter().map(|b| BearerTally { name: b.name, in_order: b.in_order, window: b.window, last: None, seen: BTreeSet::new() }).collect();
        Checks { links, bearers, violation: None, counts: Vec::new() }
    }

    pub(crate) fn violation(&self) -> Option<&Violation> {
        self.violation.as_ref()
    }

    fn fail(&mut self, at: Time, entity: &str, what: String) {
        if self.violation.is_none() {
            self.violation = Some(Violation { at, entity: entity.to_string(), what });
        }
    }

    /// Link `l` accepted `pkt` at `now`.
    pub(crate) fn accepted(&mut self, l: usize, id: u64, size: u32, now: Time) {
        let t = &mut self.links[l];
        t.entered.add(size);
        t.inside.push_back(Inside { id, size, entered: now });
    }

    /// Link `l` refused a packet of `size` bytes at its door.
    pub(crate) fn refused(&mut self, l: usize, size: u32) {
        let t = &mut self.links[l];
        t.entered.add(size);
        t.dropped.add(size);
    }

    /// Link `l`, polled at `now`, delivered `pkt` at `at`.
    pub(crate) fn delivered(&mut self, l: usize, pkt: &Packet, at: Time, now: Time) {
        let t = &mut self.links[l];
        t.delivered.add(pkt.size);
        let Some(p) = t.take(pkt, false) else {
            let what = format!("delivered packet {} ({} B, flow {}) that is not inside it (a duplicate, or one that never entered)", pkt.id, pkt.size, pkt.flow.0);
            let name = t.name.clone();
            return self.fail(at, &name, what);
        };
        let floor = t.floor(p.size);
        let earliest = p.entered + floor;
        if at < earliest || at > now {
            let what = if at > now {
                format!("polled at {:.9} s, delivered packet {} dated later", now.as_secs_f64(), pkt.id)
            } else {
                let kind = if t.model.is_some() { "the floor its model gives (fastest serialization + smallest delay)" } else { "causality (a link without a model)" };
                format!(
                    "delivered packet {} ({} B) {} after it entered at {:.9} s, before {} of {}",
                    pkt.id,
                    p.size,
                    at.since(p.entered.min(at)),
                    p.entered.as_secs_f64(),
                    kind,
                    floor
                )
            };
            let name = t.name.clone();
            self.fail(at, &name, what);
        }
    }

    /// Link `l` dropped `pkt` inside at `at`.
    pub(crate) fn dropped_inside(&mut self, l: usize, pkt: &Packet, at: Time) {
        let t = &mut self.links[l];
        t.dropped.add(pkt.size);
        if t.take(pkt, true).is_none() {
            let what = format!("dropped packet {} ({} B, flow {}) that is not inside it", pkt.id, pkt.size, pkt.flow.0);
            let name = t.name.clone();
            self.fail(at, &name, what);
        }
    }

    /// Link `l` gave back the waiting packets `gone` (discarded PDCP copies) at `now`.
    pub(crate) fn discarded(&mut self, l: usize, gone: &[Packet], now: Time) {
        for pkt in gone {
            let t = &mut self.links[l];
            t.discarded.add(pkt.size);
            if t.take(pkt, true).is_none() {
                let what = format!("gave back packet {} ({} B) that is not inside it", pkt.id, pkt.size);
                let name = t.name.clone();
                self.fail(now, &name, what);
            }
        }
    }

    /// Bearer `e`'s receiving entity delivered the COUNTs in `self.counts` upwards at `now`
    /// (the scratch list is emptied).
    pub(crate) fn bearer_released(&mut self, e: usize, now: Time) {
        let mut counts = std::mem::take(&mut self.counts);
        for &count in &counts {
            let b = &mut self.bearers[e];
            let what = if b.in_order {
                match b.last {
                    Some(last) if count <= last => {
                        let how = if count == last { "a second time" } else { "out of order" };
                        Some(format!("the receiving PDCP entity delivered COUNT {count} upwards {how}, after COUNT {last}"))
                    }
                    _ => {
                        b.last = Some(count);
                        None
                    }
                }
            } else if !b.seen.insert(count) {
                Some(format!("the receiving PDCP entity (delivering on arrival) delivered COUNT {count} upwards a second time"))
            } else {
                let last = b.last.map_or(count, |l| l.max(count));
                b.last = Some(last);
                while b.seen.first().is_some_and(|&c| c < last - b.window) {
                    b.seen.pop_first();
                }
                None
            };
            if let Some(what) = what {
                let name = b.name.clone();
                self.fail(now, &name, what);
            }
        }
        counts.clear();
        self.counts = counts;
    }

    /// At the end of the run (`now`): what each link holds must be what went in and did not
    /// come out.
    pub(crate) fn finish(&mut self, now: Time, links: &[&dyn Link]) {
        for (l, link) in links.iter().enumerate() {
            let t = &self.links[l];
            let out = t.delivered.plus(t.dropped).plus(t.discarded);
            let expected = Held { packets: t.entered.packets.wrapping_sub(out.packets), bytes: t.entered.bytes.wrapping_sub(out.bytes) };
            let listed = t.inside.iter().fold(Held::default(), |mut h, p| {
                h.add(p.size);
                h
            });
            let what = if out.packets > t.entered.packets || out.bytes > t.entered.bytes {
                Some(format!(
                    "{} packets ({} B) came out (delivered {}, dropped {}, discarded {}) of {} packets ({} B) that entered",
                    out.packets, out.bytes, t.delivered.packets, t.dropped.packets, t.discarded.packets, t.entered.packets, t.entered.bytes
                ))
            } else if listed != expected {
                Some(format!("{} packets ({} B) listed inside, but the counts leave {} packets ({} B)", listed.packets, listed.bytes, expected.packets, expected.bytes))
            } else {
                match link.held() {
                    Some(held) if held != expected => Some(format!(
                        "{} packets ({} B) entered, {} were delivered, {} dropped, {} discarded: {} packets ({} B) should be inside, but it holds {} packets ({} B)",
                        t.entered.packets, t.entered.bytes, t.delivered.packets, t.dropped.packets, t.discarded.packets, expected.packets, expected.bytes, held.packets, held.bytes
                    )),
                    _ => None,
                }
            };
            if let Some(what) = what {
                let name = t.name.clone();
                self.fail(now, &name, what);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bearer(in_order: bool) -> Checks {
        Checks::new(Vec::new(), Vec::new(), vec![BearerCheck { name: "split dc, flow f, path 0".into(), in_order, window: 2048 }])
    }

    fn release(c: &mut Checks, counts: &[i64], at: u64) {
        c.counts.extend_from_slice(counts);
        c.bearer_released(0, Time(at));
    }

    #[test]
    fn counts_in_order_with_gaps_pass() {
        let mut c = bearer(true);
        release(&mut c, &[0, 1, 2], 10);
        release(&mut c, &[5, 6], 20);
        assert_eq!(c.violation(), None);
    }

    #[test]
    fn a_count_delivered_twice_is_named_with_its_bearer_and_instant() {
        let mut c = bearer(true);
        release(&mut c, &[0, 1], 10);
        release(&mut c, &[1, 2], 1_500_000_000);
        let v = c.violation().expect("COUNT 1 went up twice").to_string();
        assert_eq!(v, "split dc, flow f, path 0 at 1.500000000 s: the receiving PDCP entity delivered COUNT 1 upwards a second time, after COUNT 1");
    }

    #[test]
    fn a_count_out_of_order_is_caught() {
        let mut c = bearer(true);
        release(&mut c, &[0, 2, 1], 10);
        assert!(c.violation().expect("COUNT 1 after 2").what.contains("COUNT 1 upwards out of order, after COUNT 2"));
    }

    #[test]
    fn delivering_on_arrival_allows_any_order_but_not_twice() {
        let mut c = bearer(false);
        release(&mut c, &[2, 0, 1, 4], 10);
        assert_eq!(c.violation(), None);
        release(&mut c, &[3, 0], 20);
        assert!(c.violation().expect("COUNT 0 twice").what.contains("delivered COUNT 0 upwards a second time"));
    }
}
