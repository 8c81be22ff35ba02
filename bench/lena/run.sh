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

# shellcheck source=build.sh
source "$here/build.sh"
bin="$build_dir/lte_cell"
lena_build "$src" "$bin"

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
