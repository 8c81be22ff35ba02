//! multiconn-metrics.
