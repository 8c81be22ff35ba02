//! The uplink MAC's band shares: what `UlMac::shares` announces is what `UlMac::tti` uses.

use multiconn_cell::channel::LinkBudget;
use multiconn_cell::ul::{UlMac, UlUeInput};
use multiconn_cell::{AmcModel, BlerCurve};
use multiconn_core::RngStream;

#[test]
fn the_announced_shares_are_the_ttis_allocations() {
    let budget = LinkBudget::study();
    let mut mac: UlMac<u32> = UlMac::new(50, 7, AmcModel::mutual_information(), BlerCurve::default(), RngStream::derive(5, "ul")).unwrap();
    let fading = vec![0.0; 50];
    for tti in 0..200u64 {
        // UEs come and go: UE u has data in TTIs where (tti + u) % (u + 2) != 0.
        let buffers: Vec<u64> = (0..7u64).map(|u| if (tti + u) % (u + 2) == 0 { 0 } else { 3000 }).collect();
        let shares = mac.shares(tti, &buffers);
        // Contiguous, in order, covering the band when anyone sends.
        let mut next = 0;
        for (_, rbs) in &shares {
            assert_eq!(rbs.start, next);
            next = rbs.end;
        }
        assert!(shares.is_empty() || next == 50, "TTI {tti}: {shares:?}");
        let inputs: Vec<UlUeInput> = buffers.iter().map(|&b| UlUeInput { loss_db: 90.0, fading_db: &fading, buffer_bytes: b }).collect();
        let out = mac.tti(tti, &budget, &inputs, |_, bytes| Some(bytes)).unwrap();
        let measured: Vec<usize> = out.measured.iter().map(|m| m.ue).collect();
        assert_eq!(measured, shares.iter().map(|(u, _)| *u).collect::<Vec<_>>(), "TTI {tti}");
        for tb in &out.tbs {
            let (_, rbs) = shares.iter().find(|(u, _)| *u == tb.ue).expect("a TB from a UE without a share");
            assert_eq!(usize::from(tb.n_prb), rbs.len(), "TTI {tti}, UE {}", tb.ue);
        }
    }
}
