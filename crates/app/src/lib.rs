//! multiconn-app: traffic sources and sinks.
