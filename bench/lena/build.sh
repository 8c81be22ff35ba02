# Sourced by the LENA scripts (run.sh, handover.sh): `lena_build SRC BIN` finds ns-3's LTE
# module and its compiler flags (bench/ns3/flags.sh), exits 3 with how to install it when it
# is missing, and rebuilds BIN from SRC when SRC is newer ($MAKE_NICE, default 10, is the
# build's niceness).

lena_build() {
    local src="$1" bin="$2"
    local here
    here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
    local modules=(ns3-core ns3-network ns3-internet ns3-point-to-point ns3-applications
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
    mkdir -p "$(dirname "$bin")"
    if [[ ! -x "$bin" || "$src" -nt "$bin" ]]; then
        echo "building $bin" >&2
        nice -n "${MAKE_NICE:-10}" g++ -std=c++17 -O2 -DNDEBUG "${cflags[@]}" -o "$bin.tmp" "$src" "${libs[@]}"
        mv "$bin.tmp" "$bin"
    fi
}
