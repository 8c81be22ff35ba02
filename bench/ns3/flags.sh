# Sourced by the ns-3 benchmark scripts (bench/ns3/run.sh, bench/lena/run.sh).
#
# ns3_flags HEADER MODULE...: sets the arrays `cflags` and `libs` to compile against Debian's
# ns-3 modules (ns3-core, ns3-lte, ...); returns 1 when ns-3 is not installed (HEADER, e.g.
# core-module.h, missing under /usr/include/ns3, or neither pkg-config nor the libraries found).
ns3_flags() {
    local header=$1 flag module
    shift
    [[ -f /usr/include/ns3/$header ]] || return 1
    cflags=()
    libs=()
    if pkg-config --exists "$@" 2>/dev/null; then
        # ns-3.37's .pc files carry a stray "-I/usr;" in Cflags: keep only well-formed flags.
        for flag in $(pkg-config --cflags "$@"); do
            [[ "$flag" == *';'* || "$flag" == *'\'* ]] || cflags+=("$flag")
        done
        # They also name absolute paths of optional libraries (GSL, SQLite) that only their
        # -dev packages provide; the ns-3 libraries already depend on the runtime ones, so
        # skip any such path that is missing.
        for flag in $(pkg-config --libs "$@"); do
            [[ "$flag" == /* && ! -e "$flag" ]] || libs+=("$flag")
        done
    elif compgen -G "/usr/lib/*/lib${*: -1}.so" >/dev/null; then
        cflags=(-I/usr/include)
        for module in "$@"; do
            libs+=("-l$module")
        done
    else
        return 1
    fi
}
