//! Wires (test builds only, feature `test-elements`): each `[[wire]]` becomes two link
//! directions whose element is a fixed-delay wire, so routes and splits name it like a link.

use super::errors::{check_name, err, FieldError};
use super::links::{Direction, LinkDirection};
use crate::schema::WireSection;
use multiconn_net::wire::WireModel;
use std::collections::HashMap;
use std::sync::Arc;

/// Appends every wire's two directions to `links` and its name to `index`.
pub(super) fn resolve_wires<'f>(wires: &'f [WireSection], links: &mut Vec<LinkDirection>, index: &mut HashMap<&'f str, usize>) -> Result<(), FieldError> {
    for (i, w) in wires.iter().enumerate() {
        check_name("wire", i, &w.name)?;
        if index.insert(&w.name, links.len() / 2).is_some() {
            return Err(err(&["wire", &w.name, "name"], format!("a link or wire is already named \"{}\"", w.name)));
        }
        if w.between[0] == w.between[1] {
            return Err(err(&["wire", &w.name, "between"], "a wire must join two different nodes"));
        }
        let [a, b] = w.between.clone();
        let model = Arc::new(WireModel { delay: w.delay });
        links.push(LinkDirection { name: w.name.clone(), direction: Direction::Forward, from: a.clone(), to: b.clone(), model: model.clone(), aqm: None, aqm_ecn: false });
        links.push(LinkDirection { name: w.name.clone(), direction: Direction::Reverse, from: b, to: a, model, aqm: None, aqm_ecn: false });
    }
    Ok(())
}
