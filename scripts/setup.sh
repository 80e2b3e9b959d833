#!/usr/bin/env bash
# Installs what qvirt needs on a Debian machine (idempotent): QEMU and its tools from Debian's
# archive, then the test guest (built from Debian packages, cached under .cache/).
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v qemu-img >/dev/null || need+=(qemu-utils)
command -v xorrisofs >/dev/null || need+=(xorriso)
command -v cpio >/dev/null || need+=(cpio)
command -v depmod >/dev/null || need+=(kmod)
[ -e /usr/share/OVMF/OVMF_CODE_4M.fd ] || need+=(ovmf)
command -v kubectl >/dev/null || need+=(kubernetes-client)
# Pod networking (masquerade NAT rules; the passt binding).
command -v nft >/dev/null || need+=(nftables)
# The handlers' migration relay (without it they relay in Node: slower, more CPU).
command -v socat >/dev/null || need+=(socat)
# The emulated TPM (spec.domain.devices.tpm): the launcher runs swtpm beside QEMU (launcher/tpm/swtpm.ts).
command -v swtpm >/dev/null || need+=(swtpm)
# The metrics test scrapes the node agent with a real Prometheus (test/virtctl/metrics-prometheus.test.ts).
command -v prometheus >/dev/null || need+=(prometheus)
# passt is built from Debian's newer source package (scripts/passt/build.sh: Debian 12's breaks TCP).
command -v make >/dev/null || need+=(make)
command -v gcc >/dev/null || need+=(gcc)
[ -e /usr/include/stdio.h ] || need+=(libc6-dev)
command -v patch >/dev/null || need+=(patch)
command -v curl >/dev/null || need+=(curl)
command -v xz >/dev/null || need+=(xz-utils)
# The image tests (npm run images) check their OCI archives with skopeo, as podman/containerd read them;
# the local image store imports archives and pulls from registries through skopeo.
command -v skopeo >/dev/null || need+=(skopeo)
# The image pull tests and benchmark run a real registry (TLS, htpasswd basic auth: htpasswd -B).
command -v docker-registry >/dev/null || need+=(docker-registry)
command -v htpasswd >/dev/null || need+=(apache2-utils)
# The Debian guest (test/guest/debian/build.sh: mmdebstrap; lz4 unpacks the cloud kernel's vmlinux)
# and the ssh tests (virtctl ssh/scp run the OpenSSH client; ssh-keygen makes their key).
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
command -v lz4 >/dev/null || need+=(lz4)
command -v zstd >/dev/null || need+=(zstd)
command -v ssh >/dev/null || need+=(openssh-client)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup: missing Debian packages: ${need[*]} (run as root, or: sudo apt-get install ${need[*]})" >&2
    exit 1
  fi
  echo "setup: installing ${need[*]}" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

scripts/passt/build.sh >&2

if [ -x src/local/guest/build.sh ]; then
  src/local/guest/build.sh >&2
fi
