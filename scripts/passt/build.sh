#!/usr/bin/env bash
# Builds passt from Debian's source package (trixie's 0.0~git20250503.587980c-2+deb13u1) into
# .cache/passt/<version>/ and prints that directory. Cached: a built version prints its path at once.
#
# Why not Debian 12's own passt (0.0~git20230309.7c7625d-1, the `passt` package): its TCP is broken
# for the passt binding's main use, a client outside the pod connecting to a forwarded port:
# - When the outside client does not send first (a server-speaks-first protocol, or a guest that
#   answers only after the connection is set up), the guest never completes its handshake: on the
#   guest's SYN,ACK passt sets seq_ack_to_tap to what it is about to acknowledge and then sends the
#   ACK "if needed" (tcp_conn_from_sock_finish → tcp_send_flag(ACK_IF_NEEDED)), which finds nothing
#   new to acknowledge and sends nothing. The guest retransmits SYN,ACK, passt ignores it, and after
#   the retries the connection is reset. Later passt sends the ACK unconditionally.
# - With --debug it segfaults on the first TCP connection: conn_flag_do() logs tcp_flag_str[fls(~flag)]
#   (index 63 of a 6-entry array) and vfprintf's strlen reads a wild pointer.
# bookworm-backports has no passt; trixie's builds on bookworm from plain C and make (no
# dependencies), so it is built here with Debian's patches, pinned by sha256.
#
# Environment: QVIRT_PASST_CACHE (cache root, default <repo>/.cache/passt).
set -euo pipefail
cd "$(dirname "$0")/../.."

VERSION='0.0~git20250503.587980c-2+deb13u1'
UPSTREAM='0.0~git20250503.587980c'
POOL='http://deb.debian.org/debian/pool/main/p/passt'
ORIG="passt_${UPSTREAM}.orig.tar.xz"
ORIG_SHA256='69d5eb843f7d648c2cc60bfbca6ea7b5014c6b6f07cdee362c2a8cf490515a49'
DEBIAN="passt_${VERSION}.debian.tar.xz"
DEBIAN_SHA256='f8d9fdfc1ba89e7dde48705ae68d1dfa8a40477cb85184d41194487f2902b77d'

cache="${QVIRT_PASST_CACHE:-$PWD/.cache/passt}"
out="$cache/$VERSION"
bins=(passt)
[ "$(uname -m)" = x86_64 ] && bins+=(passt.avx2)

built() { for b in "${bins[@]}"; do [ -x "$out/$b" ] || return 1; done; }
if built; then
  ln -sfn "$VERSION" "$cache/.current.$$" && mv -T "$cache/.current.$$" "$cache/current"
  echo "$out"
  exit 0
fi

for tool in curl make gcc patch xz sha256sum; do
  command -v "$tool" >/dev/null || { echo "passt build: $tool is missing (scripts/setup.sh installs it)" >&2; exit 1; }
done

mkdir -p "$cache/src"
fetch() { # file sha256
  local f="$cache/src/$1"
  if [ -f "$f" ] && echo "$2  $f" | sha256sum -c --quiet - 2>/dev/null; then return 0; fi
  local i
  for i in 1 2 3 4 5; do
    if curl -fsSL --retry 3 -o "$f.$$" "$POOL/$1"; then break; fi
    rm -f "$f.$$"; sleep "$i"
  done
  [ -f "$f.$$" ] || { echo "passt build: cannot download $POOL/$1" >&2; exit 1; }
  if ! echo "$2  $f.$$" | sha256sum -c --quiet - >/dev/null 2>&1; then
    rm -f "$f.$$"; echo "passt build: $1 does not have sha256 $2" >&2; exit 1
  fi
  mv "$f.$$" "$f"
}
fetch "$ORIG" "$ORIG_SHA256"
fetch "$DEBIAN" "$DEBIAN_SHA256"

work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
tar -xJf "$cache/src/$ORIG" -C "$work/src" --strip-components=1
tar -xJf "$cache/src/$DEBIAN" -C "$work/src"
if [ -f "$work/src/debian/patches/series" ]; then
  while read -r p _; do
    case "$p" in ''|'#'*) continue ;; esac
    patch -d "$work/src" -p1 --quiet --forward < "$work/src/debian/patches/$p" >&2
  done < "$work/src/debian/patches/series"
fi
echo "passt build: building passt $VERSION" >&2
# One goal per make: passt.avx2 depends on passt, and make would compile a passt it builds as that
# prerequisite with passt.avx2's -mavx2 -Ofast flags.
for b in "${bins[@]}"; do
  make -C "$work/src" VERSION="$VERSION" LDFLAGS='-Wl,-z,relro -Wl,-z,now' "$b" >>"$work/make.log" 2>&1 \
    || { tail -30 "$work/make.log" >&2; echo "passt build: make $b failed" >&2; exit 1; }
done
mkdir "$work/out"
for b in "${bins[@]}"; do install -m 0755 "$work/src/$b" "$work/out/$b"; done
# (passt --version writes through a stdio buffer it does not flush into a pipe: look in the binary.)
grep -qaF "$VERSION" "$work/out/passt" || { echo "passt build: the built passt does not carry version $VERSION" >&2; exit 1; }
# Concurrent builds: the first rename wins, the others find it built.
mv -T "$work/out" "$out" 2>/dev/null || built || { echo "passt build: cannot place $out" >&2; exit 1; }
ln -sfn "$VERSION" "$cache/.current.$$" && mv -T "$cache/.current.$$" "$cache/current"
echo "$out"
