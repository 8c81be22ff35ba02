//! The emulator's command line for Python (`multiconn._core.emu_main`): what the
//! `multiconn-emu` entry point of a pip install runs (`python/multiconn/emu_program.py`), the
//! same command line as the `multiconn-emu` binary ([`multiconn_emu::cli`]), so that an
//! installed wheel emulates without a separately built program.

use pyo3::prelude::*;

/// Runs one emulated run from the command line `args` (without the program's name) and
/// returns its exit code: 0 after a run, 2 on bad input or when this machine cannot emulate,
/// 1 when the run fails. Ctrl-C and SIGTERM end the run early with its results written (the
/// emulator's own handlers replace Python's while it runs); the interpreter's lock is released
/// meanwhile.
#[pyfunction]
fn emu_main(py: Python<'_>, args: Vec<String>) -> u8 {
    py.allow_threads(|| multiconn_emu::cli::main(args))
}

/// Adds `emu_main` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(emu_main, m)?)
}
