#!/usr/bin/env bash
# Builds and runs the ns-3 counterpart of the bulk benchmark (bench/ns3/bulk_send.cc), or with
# NS3_PROGRAM=dctcp_step the DCTCP step-marking cross-check (bench/ns3/dctcp_step.cc).
#
#   [NS3_PROGRAM=NAME] bench/ns3/run.sh [BUILD_DIR] [PROGRAM OPTIONS...]
#
# BUILD_DIR defaults to target/ns3 (relative to the repository root); an argument starting
# with "--" is taken as a program option. The binary is rebuilt only when bulk_send.cc is
# newer than it. bulk_send's options: --cc=newreno|cubic, --duration=SECONDS, --bytes=N,
# --rate=40Mbps, --delay=10ms, --queue=100, --mss=1448, --buf=BYTES.
# Prints the program's JSON line. Exits 3 if ns-3 is not installed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
program="${NS3_PROGRAM:-bulk_send}"
src="$here/$program.cc"
if [[ ! -f "$src" ]]; then
    echo "run.sh: NS3_PROGRAM=$program: no $src (bulk_send, dctcp_step)" >&2
    exit 2
fi

build_dir="$root/target/ns3"
if [[ $# -gt 0 && "$1" != --* ]]; then
    build_dir="$1"
    shift
fi

modules=(ns3-core ns3-network ns3-internet ns3-point-to-point ns3-applications ns3-traffic-control)

# shellcheck source=flags.sh
source "$here/flags.sh"
if ! ns3_flags core-module.h "${modules[@]}"; then
    cat >&2 <<'EOF'
ns-3 is not installed. On Debian or Ubuntu install the development package (ns-3.37 on Debian 12):

    sudo apt-get install libns3-dev

then run this script again.
EOF
    exit 3
fi

mkdir -p "$build_dir"
bin="$build_dir/$program"
if [[ ! -x "$bin" || "$src" -nt "$bin" ]]; then
    echo "building $bin" >&2
    g++ -std=c++17 -O2 -DNDEBUG "${cflags[@]}" -o "$bin.tmp" "$src" "${libs[@]}"
    mv "$bin.tmp" "$bin"
fi

exec "$bin" "$@"
