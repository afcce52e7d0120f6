//! One home for the fix texts: what the launcher, the jail, `doctor`, its
//! devcontainer.json lint and the installer tell the user to do when a
//! prerequisite is missing. A refusal and a finding about the same cause
//! name the same fix. (The feature's install.sh is shell and says it in
//! its own words.)

/// No usable `/dev/net/tun` in the container.
pub const TUN: &str = "add \"--device=/dev/net/tun\" to \"runArgs\" in devcontainer.json and rebuild the container \
     (`--device /dev/net/tun` with podman/docker run); it must be the character device 10:200, \
     readable and writable by the user running the agent. On Kubernetes: request it from a device plugin \
     (`squat.ai/tun: 1` in the container's resources.limits, with the generic device plugin of \
     deploy/kubernetes/tun-device-plugin.yaml), or mount the node's with a hostPath volume of type CharDevice \
     at /dev/net/tun (Pod Security \"privileged\" only); docs/kubernetes.md";

/// pasta (passt) not installed.
pub const PASTA: &str = "install passt (Debian/Ubuntu: `apt-get install passt`; Fedora: `dnf install passt`; Alpine: `apk add passt`), or run sandbox-install";

/// A pasta too old to attach to a namespace inside a container.
pub const PASTA_ATTACH: &str = "use a newer passt (2023-03 or later): Debian 13 (trixie) and Ubuntu 24.04 base images ship one that attaches inside containers";

/// bubblewrap not installed.
pub const BWRAP: &str = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Alpine: apk add bubblewrap)";

/// The container runtime's masked `/proc`: sessions then run with the
/// container's (docs/defences.md, "Under a masked /proc"); this gives them
/// one of their own.
pub const PROC: &str = "for sessions with a /proc of their own, start the container with `--security-opt unmask=/proc/*` (podman) or `--security-opt systempaths=unconfined` (docker), \
     e.g. in devcontainer.json's \"runArgs\" (the agent-sandbox feature and image ask for it themselves); in a Kubernetes pod, `securityContext.procMount: Unmasked` \
     (it needs hostUsers: false, is beta, and many platforms' policies refuse it). Where the container's root is the host's root, an unmasked /proc \
     also lets that root write host kernel settings (doctor's container-host-root): run such a container in a user namespace";

/// A container whose seccomp profile refuses user namespaces.
pub const SECCOMP: &str = "add \"--security-opt=seccomp=unconfined\" to \"runArgs\" in devcontainer.json and rebuild the container \
     (`docker run --security-opt seccomp=unconfined`; a compose service: `security_opt: [\"seccomp:unconfined\"]`). \
     The agent-sandbox feature and image ask the engine for it themselves, so it is missing only where that request was dropped. \
     Sessions still run under their own seccomp filter. Narrower, where the engine reads a profile file: the shipped profile \
     (`agent-sandbox seccomp-profile --output FILE`, deploy/seccomp/agent-sandbox.json: the engine's default plus user namespaces and mounts) \
     with `--security-opt seccomp=FILE`";

/// A pod whose seccomp profile (containerd's RuntimeDefault, derived from
/// Docker's) refuses user namespaces.
pub const SECCOMP_KUBERNETES: &str =
    "give the pod the shipped Localhost profile: `securityContext.seccompProfile: {type: Localhost, localhostProfile: agent-sandbox.json}`, \
     with the file in the kubelet's seccomp directory on every node (deploy/kubernetes/seccomp-profile-installer.yaml writes it; \
     `agent-sandbox seccomp-profile` prints it). containerd's RuntimeDefault refuses user namespaces to a container without CAP_SYS_ADMIN; \
     `Unconfined` works too but is refused by Pod Security \"baseline\" and some managed platforms (docs/kubernetes.md)";

/// A container whose AppArmor profile refuses mounts.
pub const APPARMOR: &str = "add \"--security-opt=apparmor=unconfined\" to \"runArgs\" in devcontainer.json and rebuild the container \
     (`docker run --security-opt apparmor=unconfined`; a compose service: `security_opt: [\"apparmor:unconfined\"]`). \
     The agent-sandbox feature and image ask the engine for it themselves, so it is missing only where that request was dropped. \
     Sessions still mount only inside their own namespaces";

/// User namespaces refused, with no seccomp filter to explain it.
pub const USERNS: &str = "allow user namespaces: on Ubuntu 23.10+ hosts `sysctl kernel.apparmor_restrict_unprivileged_userns=0`; elsewhere `sysctl user.max_user_namespaces=15000` (and kernel.unprivileged_userns_clone=1 where it exists); in a container, a seccomp profile that allows them (Docker's default does not: `--security-opt seccomp=unconfined` in runArgs; podman's does)";

/// `user.max_user_namespaces` is 0: a node or host setting (a container's
/// own user namespace counts against its parents' limits).
pub const MAX_USER_NAMESPACES: &str = "set it above 0 on the host or Kubernetes node (`sysctl -w user.max_user_namespaces=15000`, kept in /etc/sysctl.d/); \
     EKS Bottlerocket nodes set it to 0 by default: add `[settings.kernel.sysctl]` `\"user.max_user_namespaces\" = \"15000\"` to the node group's user data \
     (docs/kubernetes.md). No setting of the container or pod can raise it";

/// The container runs on gVisor (GKE Sandbox).
pub const GVISOR: &str =
    "run the agents' pods on a runtime with a real Linux kernel: without `runtimeClassName: gvisor` (GKE Sandbox) on a standard node pool, \
     or under a VM-isolated runtime such as Kata Containers (AKS pod sandboxing), which runs its own kernel (docs/kubernetes.md)";

/// This program runs under a user-mode emulator.
pub const EMULATED: &str = "use the image or base image built for this machine's own architecture: agent-sandbox ships for linux/amd64 and linux/arm64 (e.g. `--platform linux/arm64` on Apple Silicon and other arm64 hosts, `--platform linux/amd64` on x86_64 ones)";

/// No Landlock abstract-socket scoping (ABI 6) with the jail off.
pub const LANDLOCK: &str = "run on Linux 6.12 or later with Landlock enabled (`landlock` in the `lsm=` boot parameter), or keep the egress jail on";

/// A container whose root is the host's.
pub const CONTAINER_USERNS: &str = "run the container in a user namespace, where its root is not the host's: rootless podman or rootless Docker; rootful podman with `--userns=auto` in runArgs (it needs a `containers` range in /etc/subuid and /etc/subgid); Docker with userns-remap in daemon.json. The host's /dev/net/tun must then be usable by everyone (mode 0666, udev's default) for the egress jail";

/// Another feature's PATH before the shims for commands run without a shell.
pub const EXEC_PATH: &str = "put /usr/local/lib/agent-sandbox/bin first on the container's PATH: the agent-sandbox feature does so in its containerEnv when it installs after the features that change PATH (list those before it in \"overrideFeatureInstallOrder\"); an image or Dockerfile sets ENV PATH=/usr/local/lib/agent-sandbox/bin:$PATH after everything else that changes PATH";
