# shellcheck shell=bash
# What the README's two commands install when it is missing, shared by scripts/test.sh and
# scripts/demo.sh so that either runs first on a fresh machine. Each helper installs one Debian
# package through apt-get (as root, or through sudo when that works without a password) and says
# so in one line on stderr; `need_*` returns at once when the tool is already there.
#
#   . scripts/lib/install.sh
#   need_prometheus "the demo runs the real server"

say() { printf '==> %s\n' "$*" >&2; }

apt_updated=false
# apt_install WHY PACKAGE...: installs the packages, saying why; fails loudly when it cannot.
apt_install() {
    local why=$1
    shift
    say "installing $* ($why)"
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
            sudo=(sudo -n)
        else
            say "cannot install $*: not root and no password-less sudo (install it yourself: apt-get install $*)"
            return 2
        fi
    fi
    if ! $apt_updated; then
        "${sudo[@]}" apt-get update -qq
        apt_updated=true
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Prometheus and promtool: the real server (Debian's package ships both). The package may start
# its own service on :9090; the tests and the demo use free ports of their own.
need_prometheus() {
    command -v prometheus >/dev/null && command -v promtool >/dev/null && return 0
    apt_install "$1" prometheus
}

# python3 (and its venv module, for the Helm engine and the linters).
need_python3() {
    command -v python3 >/dev/null && python3 -c 'import ensurepip' 2>/dev/null && return 0
    apt_install "$1" python3 python3-venv
}

need_curl() {
    command -v curl >/dev/null && return 0
    apt_install "$1" curl
}

need_git() {
    command -v git >/dev/null && return 0
    apt_install "$1" git
}

# Distribution's registry (Debian's docker-registry). Its package may start a system service on
# :5000; the tests run their own on free ports of 127.0.0.1.
need_docker_registry() {
    command -v docker-registry >/dev/null && return 0
    apt_install "$1" docker-registry
}
