//! The per-second table (reference §5.2): validation errors instead of panics, CSV both ways.

use multiconn_radio::*;

fn sample(t: u32, rsrp: f64) -> CellSample {
    CellSample::new(t, "A", 6200, "12", rsrp)
}

#[test]
fn an_empty_table_is_an_error() {
    let err = DriveTable::new(vec![]).unwrap_err();
    assert_eq!(err.to_string(), "drive table: the table is empty");
    assert!(ChannelTable::new(0, vec![]).is_err());
    assert!(ChannelTable::from_capacities(0, vec![vec![]]).is_err());
}

#[test]
fn nan_or_infinite_rsrp_is_an_error_naming_the_row() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let err = DriveTable::new(vec![sample(0, -90.0), sample(1, bad)]).unwrap_err();
        assert!(matches!(err, RadioError::BadValue { row: 1, .. }), "{err:?}");
        assert!(err.to_string().starts_with("row 1: rsrp_dbm = "), "{err}");
    }
}

#[test]
fn time_going_backwards_is_an_error() {
    let err = DriveTable::new(vec![sample(3, -90.0), sample(3, -91.0), sample(2, -90.0)]).unwrap_err();
    assert_eq!(err, RadioError::TimeBackwards { row: 2, time_s: 2, previous_s: 3 });
    assert!(err.to_string().contains("non-decreasing time order"));
}

#[test]
fn labels_positions_and_speeds_are_checked() {
    let mut r = sample(0, -90.0);
    r.operator.clear();
    assert!(DriveTable::new(vec![r]).unwrap_err().to_string().contains("operator"));
    let mut r = sample(0, -90.0);
    r.cell_id.clear();
    assert!(DriveTable::new(vec![r]).unwrap_err().to_string().contains("cell_id"));
    let mut r = sample(0, -90.0);
    r.speed_mps = Some(-1.0);
    assert!(DriveTable::new(vec![r]).unwrap_err().to_string().contains("speed_mps = -1"));
    let mut r = sample(0, -90.0);
    r.x_m = Some(f64::NAN);
    assert!(DriveTable::new(vec![r]).unwrap_err().to_string().contains("x_m = NaN"));
}

#[test]
fn channel_tables_refuse_ragged_or_bad_series() {
    let err = ChannelTable::from_capacities(0, vec![vec![1.0, 2.0], vec![1.0]]).unwrap_err();
    assert_eq!(err.to_string(), "channels[1].capacity_mbps: 1 values, expected 2 (one per second)");
    let err = ChannelTable::from_capacities(0, vec![vec![1.0, f64::NAN]]).unwrap_err();
    assert!(err.to_string().starts_with("row 1: channels[0].capacity_mbps = NaN"), "{err}");
    let err = ChannelTable::from_capacities(0, vec![vec![-1.0]]).unwrap_err();
    assert!(err.to_string().contains("at least 0"), "{err}");
    let mut s = ChannelSeries::new("x", vec![1.0, 2.0]);
    s.rsrp_dbm = Some(vec![Some(-90.0), Some(f64::NAN)]);
    assert!(ChannelTable::new(0, vec![s]).unwrap_err().to_string().contains("rsrp_dbm = NaN"));
}

#[test]
fn csv_round_trips_exactly() {
    let mut rows = vec![sample(0, -90.123456789), sample(0, -100.0), sample(2, -140.0)];
    rows[1].cell_id = "7,x".into(); // a field that needs quoting
    rows[2].x_m = Some(12.5);
    rows[2].y_m = Some(-3.25);
    rows[2].speed_mps = Some(8.333333333333334);
    let table = DriveTable::new(rows).unwrap();
    let text = table.to_csv_string();
    assert!(text.starts_with("time_s,operator,earfcn,cell_id,rsrp_dbm,x_m,y_m,speed_mps\n0,A,6200,12,-90.123456789,,,\n"), "{text}");
    let back = DriveTable::read_csv(text.as_bytes()).unwrap();
    assert_eq!(back, table);
}

#[test]
fn csv_errors_name_the_line_and_column() {
    let err = DriveTable::read_csv("time_s,operator,earfcn,cell_id\n".as_bytes()).unwrap_err();
    assert!(err.to_string().contains("no column \"rsrp_dbm\""), "{err}");
    let err = DriveTable::read_csv("time_s,operator,earfcn,cell_id,rsrp_dbm\n0,A,1,x,-90\n1,A,1,x,strong\n".as_bytes()).unwrap_err();
    assert_eq!(err.to_string(), "csv line 3: rsrp_dbm = \"strong\" is not a number");
    let err = DriveTable::read_csv("time_s,operator,earfcn,cell_id,rsrp_dbm\n-1,A,1,x,-90\n".as_bytes()).unwrap_err();
    assert!(err.to_string().contains("time_s = \"-1\""), "{err}");
    let err = DriveTable::read_csv("time_s,operator,earfcn,cell_id,rsrp_dbm\n0,A,1,x,NaN\n".as_bytes()).unwrap_err();
    assert!(err.to_string().contains("rsrp_dbm = NaN"), "{err}");
    let err = DriveTable::read_csv("time_s,operator,earfcn,cell_id,rsrp_dbm\n".as_bytes()).unwrap_err();
    assert!(err.to_string().contains("empty"), "{err}");
}

#[test]
fn invalid_estimation_parameters_are_refused() {
    let table = DriveTable::new(vec![sample(0, -90.0)]).unwrap();
    let p = EstimationParams { capacity: CapacityParams { load: -0.1, ..Default::default() }, ..Default::default() };
    assert!(estimate(&table, &p).unwrap_err().to_string().starts_with("capacity.load = -0.1"));
    let p: EstimationParams = toml::from_str("[availability]\nhold_s = 2\nmerge = \"mean_mw\"\n[capacity]\nload = 0.5").unwrap();
    assert_eq!((p.availability.hold_s, p.availability.merge, p.capacity.load), (2, SampleMerge::MeanMw, 0.5));
    assert!(toml::from_str::<EstimationParams>("[availability]\nhold = 2").is_err());
}
