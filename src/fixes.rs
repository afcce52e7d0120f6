//! One home for the fix texts: what the launcher, the jail, `doctor`, its
//! devcontainer.json lint and the installer tell the user to do when a
//! prerequisite is missing. A refusal and a finding about the same cause
//! name the same fix. (The feature's install.sh is shell and says it in
//! its own words.)

/// No usable `/dev/net/tun` in the container.
pub const TUN: &str = "add \"--device=/dev/net/tun\" to \"runArgs\" in devcontainer.json and rebuild the container \
     (`--device /dev/net/tun` with podman/docker run); it must be the character device 10:200, \
     readable and writable by the user running the agent";

/// pasta (passt) not installed.
pub const PASTA: &str = "install passt (Debian/Ubuntu: `apt-get install passt`; Fedora: `dnf install passt`; Alpine: `apk add passt`), or run sandbox-install";

/// A pasta too old to attach to a namespace inside a container.
pub const PASTA_ATTACH: &str = "use a newer passt (2023-03 or later): Debian 13 (trixie) and Ubuntu 24.04 base images ship one that attaches inside containers";

/// bubblewrap not installed.
pub const BWRAP: &str = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Alpine: apk add bubblewrap)";

/// The container runtime's masked `/proc`.
pub const PROC: &str = "start the container with `--security-opt unmask=/proc/*` (podman) or `--security-opt systempaths=unconfined` (docker), e.g. in devcontainer.json's \"runArgs\"";

/// A container whose seccomp profile refuses user namespaces.
pub const SECCOMP: &str = "add \"--security-opt=seccomp=unconfined\" to \"runArgs\" in devcontainer.json and rebuild the container \
     (`docker run --security-opt seccomp=unconfined`; a compose service: `security_opt: [\"seccomp:unconfined\"]`). \
     The agent-sandbox feature and image ask the engine for it themselves, so it is missing only where that request was dropped. \
     Sessions still run under their own seccomp filter";

/// A container whose AppArmor profile refuses mounts.
pub const APPARMOR: &str = "add \"--security-opt=apparmor=unconfined\" to \"runArgs\" in devcontainer.json and rebuild the container \
     (`docker run --security-opt apparmor=unconfined`; a compose service: `security_opt: [\"apparmor:unconfined\"]`). \
     The agent-sandbox feature and image ask the engine for it themselves, so it is missing only where that request was dropped. \
     Sessions still mount only inside their own namespaces";

/// User namespaces refused, with no seccomp filter to explain it.
pub const USERNS: &str = "allow user namespaces: on Ubuntu 23.10+ hosts `sysctl kernel.apparmor_restrict_unprivileged_userns=0`; elsewhere `sysctl user.max_user_namespaces=15000` (and kernel.unprivileged_userns_clone=1 where it exists); in a container, a seccomp profile that allows them (Docker's default does not: `--security-opt seccomp=unconfined` in runArgs; podman's does)";

/// This program runs under a user-mode emulator.
pub const EMULATED: &str = "use the image or base image built for this machine's own architecture: agent-sandbox ships for linux/amd64 and linux/arm64 (e.g. `--platform linux/arm64` on Apple Silicon and other arm64 hosts, `--platform linux/amd64` on x86_64 ones)";

/// No Landlock abstract-socket scoping (ABI 6) with the jail off.
pub const LANDLOCK: &str = "run on Linux 6.12 or later with Landlock enabled (`landlock` in the `lsm=` boot parameter), or keep the egress jail on";

/// A container whose root is the host's.
pub const CONTAINER_USERNS: &str = "run the container in a user namespace, where its root is not the host's: rootless podman or rootless Docker; rootful podman with `--userns=auto` in runArgs (it needs a `containers` range in /etc/subuid and /etc/subgid); Docker with userns-remap in daemon.json. The host's /dev/net/tun must then be usable by everyone (mode 0666, udev's default) for the egress jail";

/// Another feature's PATH before the shims for commands run without a shell.
pub const EXEC_PATH: &str = "put /usr/local/lib/agent-sandbox/bin first on the container's PATH: the agent-sandbox feature does so in its containerEnv when it installs after the features that change PATH (list those before it in \"overrideFeatureInstallOrder\"); an image or Dockerfile sets ENV PATH=/usr/local/lib/agent-sandbox/bin:$PATH after everything else that changes PATH";
