//! The libraries' random choices come from the factory's seed: the client's first Initial, whose
//! destination connection ID the library draws at random (RFC 9000 §7.2), is the same for one
//! seed and differs for another, and it has the same size whatever the seed — for quinn and
//! for noq.

use multiconn_cc::CcKind;
use multiconn_core::{FlowId, Time};
use multiconn_realquic::noq::NoqFactory;
use multiconn_realquic::quinn::QuinnFactory;
use multiconn_realquic::RealDatagram;
use multiconn_transport::profile::TransportKind;
use multiconn_transport::{ConnectionParams, Profile, TransportFactory, Workload};

fn params() -> ConnectionParams {
    ConnectionParams {
        flow: FlowId(0),
        start: Time(0),
        workload: Workload::Download { size: Some(1_000_000), request_size: 100 },
        profile: Profile::default_for(TransportKind::Quic),
        cc: CcKind::Cubic,
        max_packet_size: 1500,
        resume: false,
        address_token: false,
        qlog: false,
        multipath: None,
        external_cc: None,
        external_workload: None,
        datagrams: None,
    }
}

/// The client's first datagram for `seed`, from the library `factory` builds.
fn first_initial(factory: &dyn Fn(u64) -> Box<dyn TransportFactory>, seed: u64) -> Vec<u8> {
    let (mut client, _server) = factory(seed).connect(&params()).unwrap();
    assert_eq!(client.poll_timeout(), Some(Time(0)), "the client connects at the flow's start");
    client.handle_timeout(Time(0));
    let mut ids = 0;
    let pkt = client.poll_transmit(Time(0), &mut ids).expect("the client sends its Initial at once");
    let RealDatagram(bytes) = pkt.payload.as_ref().and_then(|p| p.get::<RealDatagram>()).expect("a QUIC datagram").clone();
    assert_eq!(pkt.size as usize, bytes.len() + 28, "the datagram plus the IPv4 and UDP headers");
    bytes.to_vec()
}

/// The destination connection ID of a long-header packet (RFC 9000 §17.2).
fn dcid(datagram: &[u8]) -> &[u8] {
    assert_eq!(datagram[0] & 0x80, 0x80, "a long header");
    let len = datagram[5] as usize;
    &datagram[6..6 + len]
}

#[test]
fn the_seed_chooses_the_connection_ids_and_nothing_else_of_the_first_initial() {
    let quinn = |seed| Box::new(QuinnFactory::new(seed)) as Box<dyn TransportFactory>;
    let noq = |seed| Box::new(NoqFactory::new(seed)) as Box<dyn TransportFactory>;
    for factory in [&quinn as &dyn Fn(u64) -> Box<dyn TransportFactory>, &noq] {
        let a = first_initial(factory, 1);
        let b = first_initial(factory, 1);
        let c = first_initial(factory, 2);
        assert_eq!(dcid(&a), dcid(&b));
        assert_ne!(dcid(&a), dcid(&c));
        assert_eq!(a.len(), 1200, "the client pads its Initial to QUIC's smallest datagram (RFC 9000 §14.1)");
        assert_eq!(a.len(), c.len());
    }
    // Each library its own stream of the seed.
    assert_ne!(dcid(&first_initial(&quinn, 1)), dcid(&first_initial(&noq, 1)));
}

#[test]
fn what_quinn_lacks_is_refused_naming_the_setting() {
    let factory = QuinnFactory::new(1);
    let mut p = params();
    p.cc = CcKind::Fast;
    let e = factory.check(&p).unwrap_err();
    assert_eq!(e.knob, multiconn_transport::Knob::Cc);
    assert!(e.message.contains("newreno, cubic and bbr"), "{e}");
    let mut p = params();
    p.max_packet_size = 1200;
    assert_eq!(factory.check(&p).unwrap_err().knob, multiconn_transport::Knob::PacketSize);
}

#[test]
fn what_noq_lacks_or_cannot_seed_is_refused_naming_the_setting() {
    let factory = NoqFactory::new(1);
    let mut p = params();
    p.cc = CcKind::Bbr;
    let e = factory.check(&p).unwrap_err();
    assert_eq!(e.knob, multiconn_transport::Knob::Cc);
    assert!(e.message.contains("newreno and cubic") && e.message.contains("operating system"), "{e}");
    let mut p = params();
    p.address_token = true;
    assert_eq!(factory.check(&p).unwrap_err().knob, multiconn_transport::Knob::AddressToken);
}

#[test]
fn neither_library_takes_quic_datagrams() {
    let mut p = params();
    p.datagrams = Some(multiconn_transport::DatagramParams {
        client_max_frame_size: Some(65535),
        server_max_frame_size: Some(65535),
        priority: multiconn_transport::DatagramPriority::BeforeStreams,
        send_buffer: multiconn_transport::DatagramParams::DEFAULT_SEND_BUFFER,
    });
    for e in [QuinnFactory::new(1).check(&p).unwrap_err(), NoqFactory::new(1).check(&p).unwrap_err()] {
        assert_eq!(e.knob, multiconn_transport::Knob::Datagrams);
        assert!(e.message.contains("DATAGRAM frames"), "{e}");
    }
}
