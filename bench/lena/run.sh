#!/usr/bin/env bash
# Builds and runs the ns-3 LENA counterpart of multiconn's LTE cell (bench/lena/lte_cell.cc).
#
#   bench/lena/run.sh [BUILD_DIR] [PROGRAM OPTIONS...]
#
# BUILD_DIR defaults to target/lena (relative to the repository root); an argument starting
# with "--" is taken as a program option. The binary is rebuilt only when lte_cell.cc is newer
# than it. Program options: --distance=M, --ues=N, --fading=none|trace, --trace=FILE,
# --duration=S, --measure-from=S, --seed=N, --tcp=large|ns329, --loss=P.
#
# --fading=trace needs LENA's fading_trace_EPA_3kmph.fad, which Debian ships only in the ns-3
# source package (src/lte/model/fading-traces/). Without --trace, the script passes
# $LENA_FADING_TRACE or, if it exists, BUILD_DIR/fading_trace_EPA_3kmph.fad.
# Prints the program's JSON line. Exits 3 if ns-3 is not installed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
src="$here/lte_cell.cc"

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
bin="$build_dir/lte_cell"
if [[ ! -x "$bin" || "$src" -nt "$bin" ]]; then
    echo "building $bin" >&2
    g++ -std=c++17 -O2 -DNDEBUG "${cflags[@]}" -o "$bin.tmp" "$src" "${libs[@]}"
    mv "$bin.tmp" "$bin"
fi

args=("$@")
has_trace=0
for a in "${args[@]+"${args[@]}"}"; do
    [[ "$a" == --trace=* ]] && has_trace=1
done
if [[ $has_trace == 0 ]]; then
    if [[ -n "${LENA_FADING_TRACE:-}" ]]; then
        args+=("--trace=$LENA_FADING_TRACE")
    elif [[ -f "$build_dir/fading_trace_EPA_3kmph.fad" ]]; then
        args+=("--trace=$build_dir/fading_trace_EPA_3kmph.fad")
    fi
fi

exec "$bin" "${args[@]+"${args[@]}"}"
