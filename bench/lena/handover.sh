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

modules=(ns3-core ns3-network ns3-internet ns3-point-to-point ns3-applications
         ns3-traffic-control ns3-mobility ns3-spectrum ns3-propagation ns3-lte)

# shellcheck source=../ns3/flags.sh
source "$here/../ns3/flags.sh"
if ! ns3_flags lte-module.h "${modules[@]}"; then
    cat >&2 <<'MSG'
ns-3 with its LTE module is not installed. On Debian or Ubuntu install the development
package (ns-3.37 on Debian 12):

    sudo apt-get install libns3-dev

then run this script again.
MSG
    exit 3
fi

mkdir -p "$build_dir"
bin="$build_dir/handover"
if [[ ! -x "$bin" || "$src" -nt "$bin" ]]; then
    echo "building $bin" >&2
    nice -n "${MAKE_NICE:-10}" g++ -std=c++17 -O2 -DNDEBUG "${cflags[@]}" -o "$bin.tmp" "$src" \
        "${libs[@]}"
    mv "$bin.tmp" "$bin"
fi

exec "$bin" "$@"
