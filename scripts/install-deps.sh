#!/usr/bin/env bash
# Install the Debian packages hsbpf needs to build, test and benchmark, when any is missing.
# Debian 12 (bookworm); run as root. Quiet when everything is already there.
set -euo pipefail

pkgs=(
	make gcc clang llvm pkg-config binutils
	libbpf-dev bpftool libelf-dev libdw-dev libdebuginfod-dev debuginfod zlib1g-dev
	libcriterion-dev libcapstone-dev libncurses-dev qemu-user valgrind tmux
	gnuplot-nox sqlite3 bzip2 xz-utils gzip time python3
	linux-perf bpftrace
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}; run as root to install them" >&2
	exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
