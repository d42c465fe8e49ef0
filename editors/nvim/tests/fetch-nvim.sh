#!/usr/bin/env bash
# fetch-nvim.sh SUITE DIR
#
# Fetches the Neovim of a newer Debian suite (trixie = 0.10.x, forky = 0.12.x) into DIR without
# touching the system: a private apt list, `apt-get download`, `dpkg-deb -x`, then patchelf so the
# binary uses that suite's own loader and libc. Leaves an executable wrapper DIR/nvim that sets
# VIMRUNTIME. The mirror is taken from the system's own apt configuration.
# Needs: apt-get, dpkg-deb, patchelf (installed here when missing and we are root).
set -euo pipefail

suite=${1:?usage: fetch-nvim.sh SUITE DIR}
dir=${2:?usage: fetch-nvim.sh SUITE DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

if [ -x "$dir/nvim" ] && "$dir/nvim" --version >/dev/null 2>&1; then
	echo "fetch-nvim: $dir/nvim already there ($("$dir/nvim" --version | head -1))"
	exit 0
fi

if ! command -v patchelf >/dev/null; then
	if [ "$(id -u)" = 0 ]; then
		apt-get install -y -q patchelf >/dev/null
	else
		echo "fetch-nvim: patchelf is missing (apt-get install patchelf)" >&2
		exit 1
	fi
fi

# The Debian mirror the system already uses (deb822 .sources or one-line sources.list).
mirror=$(
	{
		cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {print $2}'
		cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '/^deb / {print ($2 ~ /^\[/ ? $3 : $2)}'
	} | grep -E '/debian/?$' | head -1
) || true
if [ -z "$mirror" ]; then
	echo "fetch-nvim: no Debian mirror found in /etc/apt" >&2
	exit 1
fi

apt_dir="$dir/.apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs" "$apt_dir/etc/preferences.d" "$apt_dir/etc/apt.conf.d"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" >"$apt_dir/sources.list"
apt_opts=(
	-o "Dir::Etc::SourceList=$apt_dir/sources.list"
	-o "Dir::Etc::SourceParts=-"
	-o "Dir::Etc::Preferences=-"
	-o "Dir::Etc::PreferencesParts=$apt_dir/etc/preferences.d"
	-o "Dir::State::Lists=$apt_dir/lists"
	-o "Dir::State::status=/dev/null"
	-o "Dir::Cache=$apt_dir/cache"
	-o "APT::Architecture=amd64"
	-o "APT::Architectures::=amd64"
	-o "Acquire::Languages=none"
	-o "Debug::NoLocking=1"
)
apt-get "${apt_opts[@]}" -q update >"$apt_dir/update.log" 2>&1 || {
	cat "$apt_dir/update.log" >&2
	exit 1
}

# neovim, its runtime, and the shared libraries it links (recursively), minus what a loader-patched
# binary never needs (scripts, data, debconf...). libc6 comes from the same suite.
mapfile -t pkgs < <(
	apt-cache "${apt_opts[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
		--no-breaks --no-replaces --no-enhances neovim neovim-runtime libc6 2>/dev/null |
		grep -v '^ ' | grep -v '^<' | sort -u |
		grep -E '^(neovim|neovim-runtime|libc6|libgcc-s1|lib[a-z0-9.+-]+|lua-[a-z0-9.+-]+)$' |
		grep -vE '^(libc-bin|libc-l10n|libcrypt1|libselinux1|libpcre2.*|libdebconf.*|libperl.*)$'
)
(cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" -q download "${pkgs[@]}" >"$apt_dir/download.log" 2>&1) || {
	cat "$apt_dir/download.log" >&2
	exit 1
}

root="$dir/root"
rm -rf "$root"
mkdir -p "$root"
for deb in "$apt_dir"/debs/*.deb; do
	dpkg-deb -x "$deb" "$root"
done

bin="$root/usr/bin/nvim"
[ -x "$bin" ] || { echo "fetch-nvim: no nvim in the $suite packages" >&2; exit 1; }
loader=$(ls "$root"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$root"/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$root"/lib64/ld-linux-x86-64.so.2 2>/dev/null | head -1 || true)
[ -n "$loader" ] || { echo "fetch-nvim: no loader in the $suite libc6" >&2; exit 1; }
libpath="$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu"
# Lua modules (lpeg, luv) that nvim loads at run time live under the suite's lua paths.
patchelf --set-interpreter "$loader" --force-rpath --set-rpath "$libpath" "$bin"

cat >"$dir/nvim" <<WRAP
#!/bin/sh
export VIMRUNTIME="$root/usr/share/nvim/runtime"
exec "$bin" "\$@"
WRAP
chmod +x "$dir/nvim"
"$dir/nvim" --version | head -1
