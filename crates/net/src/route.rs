//! Routes: the hops a packet crosses, per flow, path and direction.
//!
//! A packet names its flow (`Packet::flow`), its path (`Packet::path`, 0 unless multipath),
//! its direction (`Packet::route`: 0 from the flow's `from` node to its `to` node, 1 back)
//! and the hop it is at (`Packet::hop`). The route table maps the first three to a list of
//! hops; the network advances `hop` as the packet crosses each one.

/// One hop of a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hop {
    /// A link direction (index into the network's links).
    Link(usize),
    /// A split bearer crossed from one side to the other: `split` indexes the network's split
    /// configurations, `legs` are its two legs in the crossing direction.
    Split {
        /// The split's index in the network's split configurations.
        split: usize,
        /// Its two legs, first leg first.
        legs: [Leg; 2],
    },
    /// A multi-port element crossed at one of its ports ([`crate::port`]): a cell between its
    /// eNB and one of its UEs, at the port of that UE and direction
    /// ([`cell_port`](crate::port::cell::cell_port)).
    Port {
        /// The element's index in the network's multi-port elements.
        element: usize,
        /// The port, as the element numbers them.
        port: u32,
    },
}

/// One leg of a split, in the direction a bearer crosses it: a link direction, or a
/// multi-port element's port (a cell's bearer of one UE and direction, for dual connectivity
/// over cells).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leg {
    /// A link direction (index into the network's links).
    Link(usize),
    /// A port of a multi-port element.
    Port {
        /// The element's index in the network's multi-port elements.
        element: usize,
        /// The port, as the element numbers them.
        port: u32,
    },
}

/// The routes of one flow: for each path, its forward (`route` 0) and reverse (`route` 1)
/// hops.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowRoutes {
    /// The flow's name, for messages.
    pub name: String,
    /// Per path: the forward route (from `from` to `to`) and the reverse route.
    pub paths: Vec<[Vec<Hop>; 2]>,
}

impl FlowRoutes {
    /// A single-path flow.
    pub fn single(name: &str, forward: Vec<Hop>, reverse: Vec<Hop>) -> FlowRoutes {
        FlowRoutes { name: name.to_string(), paths: vec![[forward, reverse]] }
    }

    /// The hops of path `path` in direction `route` (0 forward, anything else reverse).
    ///
    /// # Panics
    /// When the flow has no such path: a model named a path its scenario does not have.
    pub fn hops(&self, path: u8, route: u16) -> &[Hop] {
        let routes = self.paths.get(path as usize).unwrap_or_else(|| {
            panic!("flow \"{}\": a packet names path {path}, but the flow has {} paths", self.name, self.paths.len())
        });
        &routes[usize::from(route != 0)]
    }
}
