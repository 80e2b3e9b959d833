#!/bin/sh
# virt-tail (KubeVirt's cmd/virt-tail), `qvirt tail --logfile FILE`: the launcher pod's guest-console-log
# container follows the guest's serial console log, so `kubectl logs <pod> -c guest-console-log` shows
# the console. coreutils' `tail -F` does the work: it waits for the file to appear and follows it by name
# across truncation and replacement. A shell and tail rather than a Node process: a Node start cost every
# VM start 27 ms of CPU (≈2 s of wall time under the container's 15m CPU limit) and ≈40 MiB of RSS; these
# two take under a millisecond and ≈2 MiB (KubeVirt's is a small Go binary). Exits 0 on SIGTERM.
set -u
export PATH="${PATH:-/usr/local/bin:/usr/bin:/bin}"
file=
while [ $# -gt 0 ]; do
  case "$1" in
    --logfile)
      if [ $# -lt 2 ]; then echo "qvirt tail: --logfile needs a value" >&2; exit 2; fi
      file=$2; shift 2 ;;
    --logfile=*) file=${1#--logfile=}; shift ;;
    -h|--help)
      printf 'Usage: qvirt tail --logfile FILE\n\nFollow a guest console log (virt-tail).\n\n  --logfile FILE  the console log to follow (virt-serial0-log)\n'
      exit 0 ;;
    *) echo "qvirt tail: unknown flag \"$1\" (usage: qvirt tail --logfile FILE)" >&2; exit 2 ;;
  esac
done
if [ -z "$file" ]; then echo "qvirt tail: --logfile is required" >&2; exit 2; fi
pid=
trap 'if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; fi; exit 0' TERM INT
# tail's own notices (the file has appeared, was truncated) would read as console output: not shown.
tail -F -n +1 -s 0.2 -- "$file" 2>/dev/null &
pid=$!
wait "$pid"
