#!/usr/bin/env bash
# Builds and runs the ns-3 LENA side of the handover cross-check (bench/lena/handover.cc): one
# UE driving past a line of eNBs with X2 handover and a saturated TCP download.
#
#   bench/lena/handover.sh [BUILD_DIR] [PROGRAM OPTIONS...]
#
# BUILD_DIR defaults to target/lena (relative to the repository root); an argument starting
# with "--" is taken as a program option. The binary is rebuilt only when handover.cc is newer
# than it; $MAKE_NICE (default 10) is the build's niceness. Program options: --enbs=N, --isd=M,
# --start=M, --end=M, --y=M, --speed=M/S, --algorithm=a3|a2a4, --hysteresis=DB, --ttt=MS,
# --serving-threshold=N, --neighbour-offset=N, --duration=S, --bin=S, --rlc=um|am,
# --ctrl-errors=on|off, --rrc=ideal|real, --x2-delay=MS, --loss=P, --seed=N.
# Prints the program's JSON lines (config, events, RSRP, goodput bins, summary; see the header
# of handover.cc). Exits 3 if ns-3 is not installed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
src="$here/handover.cc"

build_dir="$root/target/lena"
if [[ $# -gt 0 && "$1" != --* ]]; then
    build_dir="$1"
    shift
fi

# shellcheck source=build.sh
source "$here/build.sh"
bin="$build_dir/handover"
lena_build "$src" "$bin"

exec "$bin" "$@"
