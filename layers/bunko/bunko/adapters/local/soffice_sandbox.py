"""A jail for one LibreOffice conversion: no network, and no file system beyond the job.

A document can link pictures, OLE objects and templates by URL (`http://…`, `file:///…`),
and LibreOffice fetches them while it loads the document: a server-side request forgery
and a local file read. So each conversion runs under `unshare` in namespaces of its own:

- a fresh network namespace (only a loopback that is down: no address is reachable);
- a fresh mount namespace whose root is an empty tmpfs holding read-only binds of the
  system's program folders (/usr, /etc, the fonts cache, LibreOffice's own folder) and the
  job folder (input, output, profile) — nothing else of the host is there to be read;
- a fresh PID namespace with its own /proc, so /proc/<pid>/root cannot lead back out, and
  a /dev/shm of its own;
- as root, LibreOffice runs as `nobody` (and with no_new_privs), so even the bound /etc
  gives away nothing root-only.

`unshare` needs root (or, unprivileged, user namespaces: `--map-root-user`). Where neither
works the sandbox is unavailable and the converter refuses to convert unless isolation was
switched off on purpose (BUNKO_LIBREOFFICE_SANDBOX=off): never silently unprotected.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

NOBODY = 65534
JOB_INSIDE = "/job"

# Runs as PID 1 of the new namespaces: $1 the new root, $2 the job folder, $3 the folders
# to bind read-only (space separated), $4 1 to drop to nobody; then the command itself.
_SCRIPT = r"""
set -e
PATH=/usr/sbin:/usr/bin:/sbin:/bin; export PATH
root=$1 job=$2 binds=$3 drop=$4
shift 4
mkdir -p "$root"
mount -t tmpfs -o mode=0755,nosuid bunko-sandbox "$root"
for dir in $binds; do
  mkdir -p "$root$dir"
  mount --rbind "$dir" "$root$dir"
  mount -o remount,bind,ro,nosuid "$root$dir"
done
for link in bin sbin lib lib32 lib64; do
  if [ -L "/$link" ]; then ln -s "$(readlink "/$link")" "$root/$link"; fi
done
mkdir -p "$root/dev" "$root/proc" "$root/tmp" "$root/job"
mount --rbind /dev "$root/dev"
if [ -d "$root/dev/shm" ]; then mount -t tmpfs -o mode=1777,nosuid,nodev shm "$root/dev/shm"; fi
mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
chmod 1777 "$root/tmp"
mount --bind "$job" "$root/job"
if [ "$drop" = 1 ]; then
  exec chroot "$root" setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs "$@"
fi
exec chroot "$root" "$@"
"""

# Each probe is one way to enter fresh namespaces; the first that works is kept.
_PRIVILEGED = ["--net", "--mount", "--pid", "--fork", "--kill-child", "--propagation", "private"]
_UNPRIVILEGED = ["--user", "--map-root-user", *_PRIVILEGED]


class SandboxUnavailableError(RuntimeError):
    """No way to isolate LibreOffice on this machine."""


class SofficeSandbox:
    """Wraps a command so it runs jailed with only `job` (seen as /job) of the host's data."""

    def __init__(self, binary: str, *, unshare: str | None = None) -> None:
        self.binary = binary
        self._unshare = unshare or shutil.which("unshare")
        self._mode: list[str] | None = None
        self._failure: str | None = None

    def binds(self) -> list[str]:
        """Host folders the jail sees, read-only: programs, libraries, configuration, fonts,
        and the folder LibreOffice is installed in (it may live in /opt)."""
        folders = ["/usr", "/etc", "/var/cache/fontconfig"]
        home = Path(os.path.realpath(self.binary)).parents
        install = next((str(p) for p in home if p.parent == Path("/")), None)
        if install and install not in folders and install not in ("/bin", "/lib", "/sbin"):
            folders.append(install)
        return [f for f in folders if Path(f).is_dir() and not Path(f).is_symlink()]

    def wrap(self, command: list[str], *, job: Path, root: Path) -> list[str]:
        """The command line that runs `command` (paths in it as seen inside: /job/...)
        jailed. Raises SandboxUnavailableError when namespaces cannot be made here."""
        return self._command(self._probe(root), command, job=job, root=root)

    def drops_privileges(self) -> bool:
        """True when the jailed command runs as `nobody` (the job folder must be theirs)."""
        return os.geteuid() == 0 and self._mode is _PRIVILEGED

    def _command(self, mode: list[str], command: list[str], *, job: Path, root: Path) -> list[str]:
        drop = "1" if os.geteuid() == 0 and mode is _PRIVILEGED else "0"
        return [
            self._unshare or "unshare",
            *mode,
            "--",
            "/bin/sh",
            "-c",
            _SCRIPT,
            "bunko-sandbox",
            str(root),
            str(job),
            " ".join(self.binds()),
            drop,
            *command,
        ]

    def _probe(self, root: Path) -> list[str]:
        if self._mode is not None:
            return self._mode
        if self._failure is not None:
            raise SandboxUnavailableError(self._failure)
        if not self._unshare:
            self._failure = "unshare (util-linux) is not installed"
            raise SandboxUnavailableError(self._failure)
        job = root.parent / "probe-job"
        job.mkdir(exist_ok=True)
        root.mkdir(exist_ok=True)
        errors = []
        for mode in (_PRIVILEGED, _UNPRIVILEGED):
            try:
                done = subprocess.run(  # noqa: S603 - fixed programs, no shell of ours
                    self._command(mode, ["/bin/true"], job=job, root=root),
                    capture_output=True,
                    text=True,
                    timeout=30,
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                done = None
                errors.append(str(exc))
            if done is not None and done.returncode == 0:
                self._mode = mode
                return mode
            if done is not None:
                errors.append(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "")
        self._failure = "cannot create namespaces for LibreOffice: " + "; ".join(errors)
        raise SandboxUnavailableError(self._failure)
