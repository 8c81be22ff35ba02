//! Generates a synthetic drive with a preset and prints the study's Table 2/3 statistics and,
//! for each case (sp, 1–4, reference defaults), the mean MP and SP capacity and the handovers.
//!
//! `cargo run --release -p multiconn-radio --example drive_stats -- PRESET [DURATION_S] [SEED ...]`

use multiconn_radio::{estimate, generate, run_case, Case, DelayModel, DriveConfig, EstimationParams, HandoverParams};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let preset = args.first().map(String::as_str).unwrap_or("residential");
    let mut config = DriveConfig::preset(preset).unwrap_or_else(|e| panic!("{e}"));
    if let Some(d) = args.get(1) {
        config.duration_s = d.parse().expect("DURATION_S is a whole number of seconds");
    }
    let seeds: Vec<u64> = if args.len() > 2 { args[2..].iter().map(|s| s.parse().expect("a seed")).collect() } else { vec![1] };
    for seed in seeds {
        let table = generate(&config, seed).unwrap_or_else(|e| panic!("{e}"));
        let est = estimate(&table, &EstimationParams::default()).unwrap_or_else(|e| panic!("{e}"));
        let st = est.stats();
        println!(
            "{preset} seed {seed}: {} s, visible {:.2}, available {:.2}, share of 0..=4 available {:?}",
            st.seconds,
            st.mean_visible,
            st.mean_available,
            st.available_share.iter().map(|s| (s * 1000.0).round() / 1000.0).collect::<Vec<_>>()
        );
        let rows = st
            .operators
            .iter()
            .map(|(o, s)| (format!("{o} SP"), *s))
            .chain([("best SP".to_string(), st.best_single_path), ("multipath".to_string(), st.multipath)]);
        println!("  {:<10} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}", "level", "mean", "median", "p20", "p10", "p5", "p1", "p0.1");
        for (name, s) in rows {
            println!(
                "  {name:<10} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2}",
                s.mean, s.median, s.p20, s.p10, s.p5, s.p1, s.p0_1
            );
        }
        let channels = est.channel_table();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        for case in Case::ALL {
            let tl = run_case(&channels, &HandoverParams::for_case(case), &DelayModel::default()).unwrap_or_else(|e| panic!("{e}"));
            println!(
                "  case {:<3} MP {:>6.2}  SP {:>6.2}  handovers {:>5}  path events {:>5}",
                case.name(),
                mean(&tl.mp_capacity_mbps),
                mean(&tl.sp_capacity_mbps),
                tl.handovers,
                tl.events.len()
            );
        }
    }
}
