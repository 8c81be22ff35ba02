//! Property test of the SACK scoreboard's invariants under arbitrary operation sequences.

use multiconn_cc::SentRateState;
use multiconn_core::Time;
use multiconn_tcp::scoreboard::Scoreboard;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Send(u64),
    Sack(u64, u64),
    Ack(u64),
    MarkLost(usize),
    MarkBySack,
    Rto,
    RetransmitNext,
    RetransmitAny(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1u64..300).prop_map(Op::Send),
        4 => (0u64..4000, 0u64..1500).prop_map(|(a, l)| Op::Sack(a, a + l)),
        2 => (0u64..4000).prop_map(Op::Ack),
        1 => (0usize..40).prop_map(Op::MarkLost),
        1 => Just(Op::MarkBySack),
        1 => Just(Op::Rto),
        2 => Just(Op::RetransmitNext),
        1 => (0usize..40).prop_map(Op::RetransmitAny),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn invariants_hold(ops in proptest::collection::vec(op(), 1..120)) {
        let mut sb = Scoreboard::new(1);
        let mut t = 0u64;
        for o in ops {
            t += 1;
            let una_before = sb.snd_una();
            let outstanding_before = sb.outstanding();
            match o {
                Op::Send(len) => { sb.on_sent(len, Time(t), SentRateState::default()); }
                Op::Sack(a, b) => {
                    let before = sb.sacked_bytes();
                    let n = sb.sack(a, b, |_| ());
                    prop_assert_eq!(sb.sacked_bytes(), before + n);
                }
                Op::Ack(a) => {
                    sb.ack(a, |_| ());
                    prop_assert!(sb.snd_una() >= una_before);
                    if a > una_before && a <= sb.snd_nxt() {
                        prop_assert_eq!(sb.snd_una(), a);
                        prop_assert!(sb.segments().all(|s| s.start >= a));
                    }
                    prop_assert!(sb.outstanding() <= outstanding_before);
                }
                Op::MarkLost(i) => { sb.mark_lost(i); }
                Op::MarkBySack => sb.mark_lost_by_sack(3, 100, |s| assert!(!s.sacked)),
                Op::Rto => {
                    sb.mark_all_lost();
                    prop_assert!(sb.segments().all(|s| s.sacked || s.lost));
                }
                Op::RetransmitNext => {
                    if let Some(i) = sb.next_lost() {
                        let first = sb.segments().position(|s| s.needs_retransmission());
                        prop_assert_eq!(Some(i), first);
                        sb.on_retransmitted(i, Time(t), SentRateState::default());
                    } else {
                        prop_assert!(sb.segments().all(|s| !s.needs_retransmission()));
                    }
                }
                Op::RetransmitAny(i) => {
                    if i < sb.len() {
                        sb.on_retransmitted(i, Time(t), SentRateState::default());
                    }
                }
            }
            if let Err(e) = sb.check_invariants() {
                return Err(TestCaseError::fail(e));
            }
            prop_assert!(sb.pipe() <= sb.outstanding());
            prop_assert!(sb.sacked_ranges().iter().all(|r| r.0 >= sb.snd_una() && r.1 <= sb.snd_nxt()));
            prop_assert!(sb.segments().all(|s| !(s.lost && s.sacked)));
        }
    }
}
