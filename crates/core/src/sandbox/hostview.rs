//! The host as a session sees it, made by the process that becomes bwrap,
//! in a mount namespace of its own, just before it does; bwrap's recursive
//! binds then carry what is made here into the session, locked there like
//! every mount from a more privileged namespace.
//!
//! What is made here (the plan decides, `plan.host_view`, `premount`):
//! - for a root launcher whose session is unprivileged on host files
//!   (`HostView::Unprivileged`, docs/defences.md "root launcher"): the
//!   places the session writes (the home it binds state from, the
//!   workspace, `allowWrite` paths) as idmapped trees that exchange their
//!   owner and the session's outer uid, so what the session creates or
//!   changes there keeps the owner it would have had; then the drop to that
//!   uid, so the kernel's own permission checks hide everything only root
//!   may use, wherever it lies;
//! - where the kernel has the whole mount API (`MountApi::Full`), the
//!   session's view itself: the host's tree read-only, then every mount of
//!   the plan but `/dev` and `/proc` (bwrap's, in the session's own
//!   namespaces), each onto the object a walk from the mount that covers
//!   it opened (never following anything in a place sessions write), from
//!   a source taken before anything was mounted; bwrap then binds `/` as
//!   it is. Otherwise the premounts only: the mounts whose destination lies
//!   in a place sessions write (`mountfd`), the rest left to bwrap;
//! - the early masks (the workspace's hidden siblings), by descriptor too;
//! - for a root launcher without idmapped mounts (`HostView::Scan`), the
//!   root-only scan's masks (`rootscan`): at once, or in the jail while
//!   bwrap sets up (`Later`).
//!
//! Order (the process is single-threaded; it execs bwrap next, or, in the
//! jail, becomes the holder first):
//! 1. a mount namespace of its own, private: a root launcher's in its own
//!    (the initial) user namespace, a user's in the jail holder's user
//!    namespace or in one made here (the launcher's id as itself);
//! 2. the empty file and the data files the executor mounts, on a private
//!    tmpfs (bind sources must be mounts of this namespace), its
//!    superblock read-only;
//! 3. mount points in places sessions write that do not exist, created as
//!    the launcher in the places as they are (before any idmapped tree
//!    covers them, so they get the launcher's owner);
//! 4. the idmapped trees attached onto their places;
//! 5. (`Full`) the sources of the executor's binds cloned, before anything
//!    covers them; the host's tree read-only, nosuid and nodev;
//! 6. the executor's mounts, in plan order (`Full`), or the premounts;
//! 7. the early masks; the scan's masks (or the process that mounts them
//!    later);
//! 8. for an unprivileged session: the allowed devices' groups as the only
//!    supplementary ones; without the jail, the outer uid and gid, still
//!    dying with the launcher (in the jail the holder becomes them once its
//!    namespaces, root's so that a root pasta may join them, and the
//!    interface are made: `jail::run::holder`).

use crate::sandbox::mountfd;
use crate::sandbox::mounts::Mount;
use crate::sandbox::plan::{HostView, Plan};
use crate::sandbox::premount::Premount;
use nix::mount::{mount, MsFlags};
use nix::sched::{unshare, CloneFlags};
use std::io::Error;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

/// Where the empty file may be staged (a private tmpfs over it, in the
/// launcher's own mount namespace): places every session gets a fresh one
/// of (`--tmpfs /tmp`, `--dev /dev`, `--tmpfs /run`) and the root-only scan
/// skips; /run last, since verify's weakened plans share parts of it. The
/// first that no host path the launch still opens lies in is taken: a
/// workspace, allowWrite path or launcher binary under /tmp must stay
/// reachable, and the overmount would hide it.
const STAGING_CANDIDATES: &[&str] = &["/tmp", "/dev/shm", "/run"];

/// The same where the executor makes the whole view: /dev/shm first. No
/// mount of the executor's covers it (bwrap makes /dev), so what is staged
/// there stays reachable by path for bwrap's own binds under /dev (the
/// jail's gate), and bwrap's fresh /dev hides it from the session. A
/// noexec one (a container's) is passed over: bwrap then binds the gate
/// and the probe from their own paths, which works unless one of the
/// executor's mounts covers them (a launcher under /tmp in such a
/// container: not supported there).
const STAGING_CANDIDATES_FULL: &[&str] = &["/dev/shm", "/tmp", "/run"];

/// The host paths a launch opens or binds from once the staging tmpfs is
/// mounted: bwrap's bind sources, the descriptors' roots, the premounts'
/// and the idmapped places, the early masks.
fn host_paths<'a>(plan: &'a Plan, premounts: &'a [Premount], idmapped: &'a [(PathBuf, OwnedFd)]) -> Vec<&'a Path> {
    let sources = plan.mounts.iter().filter_map(|m| match &m.mount {
        Mount::RoBind { src, .. } | Mount::Bind { src, .. } | Mount::DevBind { src, .. } => Some(src.as_path()),
        _ => None,
    });
    let opened = plan.data.iter().filter_map(|d| d.open.as_ref()).map(|o| o.root.as_path());
    sources.chain(opened).chain(premounts.iter().map(|p| p.root.as_path())).chain(idmapped.iter().map(|(p, _)| p.as_path())).chain(plan.early_masks()).collect()
}

/// The first candidate that exists (`is_dir`) and holds none of `used`.
fn staging_place(candidates: &[&'static str], used: &[&Path], is_dir: impl Fn(&Path) -> bool) -> Result<&'static str, Error> {
    candidates.iter().copied().find(|c| is_dir(Path::new(c)) && !used.iter().any(|u| u.starts_with(c))).ok_or_else(|| {
        Error::other(format!(
            "the launcher needs one of {} that the session's paths do not lie in, to stage its masks; move the workspace, allowWrite path or launcher elsewhere",
            candidates.join(", ")
        ))
    })
}

/// Descriptors the host view made for bwrap's data files, by index: the
/// jail's gate staged where bwrap can still reach it by path.
#[derive(Default)]
pub struct ForBwrap(pub Vec<(usize, OwnedFd)>);

/// Masks that come later: the findings of a scan still running while
/// bwrap already sets up; `done` is where the outcome is reported (`1`,
/// or `0` and why), which the gate waits for.
pub struct Later<'a> {
    pub scan: &'a crate::sandbox::rootscan::Pending,
    pub done: &'a OwnedFd,
}

/// What the launcher prepared when it decided an unprivileged session:
/// each place to bind through an idmapped tree, with that tree (detached,
/// not visible anywhere until step 4 attaches it).
#[derive(Default)]
pub struct Prepared {
    pub idmapped: Vec<(PathBuf, OwnedFd)>,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.idmapped.iter().map(|(p, _)| p)).finish()
    }
}

/// Whether the user namespace that owns this mount namespace is the one
/// the launcher started in or one of the session's.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Stage {
    /// A root launcher's unprivileged session, with root's own rights (the
    /// idmapped mounts need them): steps 1-7.
    Root { jail: bool },
    /// Any other launch (a user's; root's scanned one, whose container may
    /// not let root mount), in a user namespace: steps 1-3, 5, 6;
    /// `in_userns` when the jail's holder already owns one.
    User { in_userns: bool },
}

/// The root-only scan's findings, for `apply`: masked at once, or later
/// (in the jail, while bwrap sets up).
pub enum Scanned<'a> {
    None,
    Now(Vec<PathBuf>),
    Later(Later<'a>),
}

/// Steps 1-8 for `stage`.
pub fn apply(plan: &Plan, prepared: &Prepared, stage: Stage, scanned: Scanned<'_>) -> Result<ForBwrap, Error> {
    let premounts = &plan.premounts();
    let early = plan.early_masks();
    let nothing = premounts.is_empty() && early.is_empty() && prepared.idmapped.is_empty() && matches!(scanned, Scanned::None);
    if nothing && plan.host_view == HostView::Launcher && !plan.executor_view() {
        return Ok(ForBwrap::default());
    }
    let mut t = crate::launch::Phases::new();
    enter_namespace(stage, plan)?;
    t.mark("namespace");
    let candidates = if plan.executor_view() { STAGING_CANDIDATES_FULL } else { STAGING_CANDIDATES };
    // What is staged may be run (the jail's gate, verify's probe): not
    // where the mount forbids it (a container's /dev/shm is noexec).
    let usable =
        |p: &Path| p.is_dir() && !p.is_symlink() && nix::sys::statvfs::statvfs(p).is_ok_and(|v| !v.flags().contains(nix::sys::statvfs::FsFlags::ST_NOEXEC));
    let staging = staging_place(candidates, &host_paths(plan, premounts, &prepared.idmapped), usable)?;
    let owner = session_owner(stage, &plan.host_view);
    let staged = stage_files(staging, plan, premounts, owner)?;
    t.mark("staged");
    create_mount_points(plan, premounts)?;
    t.mark("mount points");
    for (path, tree) in &prepared.idmapped {
        let target = crate::nofollow::open_root(path).map_err(|e| Error::other(format!("cannot open {}: {e}", path.display())))?;
        mountfd::attach(tree.as_raw_fd(), target.as_raw_fd())
            .map_err(|e| Error::other(format!("cannot bind {} for the session's uid: {e}", path.display())))?;
    }
    t.mark("idmapped");
    if plan.executor_view() {
        let sources = open_sources(plan, premounts)?;
        t.mark("sources");
        if matches!(plan.mount(0), Some(Mount::RoBind { .. })) {
            host_read_only()?;
        }
        t.mark("read-only");
        let tmpfs = tmpfs_options(owner);
        for (p, source) in premounts.iter().zip(&sources) {
            make(plan, p, source.as_ref(), &staged, &tmpfs, owner)?;
        }
        t.mark("mounts");
    } else {
        for p in premounts {
            premount(plan, p, &staged.empty)?;
        }
    }
    for p in &early {
        mask_entry(p, &staged.empty)?;
    }
    match scanned {
        Scanned::None => {}
        Scanned::Now(found) => found.iter().try_for_each(|p| mask_entry(p, &staged.empty))?,
        Scanned::Later(later) => {
            // The namespace a shared peer group, so what the forked
            // process mounts reaches bwrap's (slave) copy.
            let none: Option<&str> = None;
            mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_SHARED, none)?;
            follow_up(&later, &staged.empty)?;
        }
    }
    t.mark("masks");
    t.log("host view made");
    match (stage, &plan.host_view) {
        // In the jail the holder becomes the uid itself, once its
        // namespaces (root's, for pasta to join) and interface are made;
        // its supplementary groups are set here, before it unshares.
        (Stage::Root { jail: true }, HostView::Unprivileged { groups, .. }) => set_groups(groups),
        (Stage::Root { jail: false }, HostView::Unprivileged { uid, gid, groups, .. }) => become_unprivileged(*uid, *gid, groups),
        _ => Ok(()),
    }?;
    Ok(ForBwrap(staged.dev_binds))
}

/// The allowed devices' groups as the only supplementary groups.
fn set_groups(groups: &[u32]) -> Result<(), Error> {
    let gids: Vec<nix::unistd::Gid> = groups.iter().map(|g| nix::unistd::Gid::from_raw(*g)).collect();
    Ok(nix::unistd::setgroups(&gids)?)
}

/// Step 1.
fn enter_namespace(stage: Stage, plan: &Plan) -> Result<(), Error> {
    match stage {
        Stage::Root { .. } | Stage::User { in_userns: true } => unshare(CloneFlags::CLONE_NEWNS)?,
        Stage::User { in_userns: false } => {
            // Read before the unshare: unmapped ids then read as the overflow id.
            let (uid, gid) = (nix::unistd::getuid().as_raw(), nix::unistd::getgid().as_raw());
            unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS).map_err(|e| no_userns(plan.uid, e))?;
            // The launcher's ids as themselves, root's as `nobody` (as the
            // jail's holder maps them): bwrap gets no capability here.
            let (inner_uid, inner_gid) = (crate::jail::inner_id(uid), crate::jail::inner_id(gid));
            let (uid_map, gid_map) = (format!("{inner_uid} {uid} 1\n"), format!("{inner_gid} {gid} 1\n"));
            crate::idmap::write(crate::idmap::Whose::This, &uid_map, &gid_map, crate::idmap::Setgroups::Deny)?;
        }
    }
    let none: Option<&str> = None;
    mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none)?;
    Ok(())
}

/// What the executor binds from the staging tmpfs: the empty file masks
/// are bound from, and the contents of the data files it mounts itself
/// (by plan data number).
struct Staged {
    empty: OwnedFd,
    data: Vec<(usize, OwnedFd)>,
    /// The files bwrap binds into its /dev (`Plan::dev_binds`): data
    /// index and staged bind.
    dev_binds: Vec<(usize, OwnedFd)>,
}

/// Step 2: the empty file and the executor's data files, on a tmpfs whose
/// superblock is then read-only (so every bind of them is, also where a
/// mount's own flag does not travel).
fn stage_files(staging: &str, plan: &Plan, premounts: &[Premount], owner: Option<(u32, u32)>) -> Result<Staged, Error> {
    let none: Option<&str> = None;
    mount(Some("tmpfs"), staging, Some("tmpfs"), MsFlags::MS_NOSUID | MsFlags::MS_NODEV, Some("mode=0700,size=1m"))?;
    let dir = Path::new(staging);
    // Owned by whom the session is on host files, as bwrap's copies of
    // them would be: its own files inside.
    let write = |name: &str, bytes: &[u8]| -> Result<(), Error> {
        let path = dir.join(name);
        std::fs::write(&path, bytes)?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::lchown(&path, Some(uid), Some(gid))?;
        }
        Ok(())
    };
    write("empty", b"")?;
    // bwrap, as that owner, reaches the staged files by path.
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::lchown(dir, Some(uid), Some(gid))?;
    }
    let mut data = Vec::new();
    for p in premounts {
        if let Some(Mount::Data { data: i, .. }) = plan.mount(p.mount) {
            write(&format!("data{i}"), plan.data.get(*i).map(|d| d.bytes.as_slice()).unwrap_or_default())?;
            data.push(*i);
        }
    }
    let dev_binds = if plan.executor_view() && staging.starts_with("/dev/") { plan.dev_binds() } else { Vec::new() };
    for (i, o) in &dev_binds {
        let name = format!("bind{i}");
        if o.dir {
            std::fs::create_dir(dir.join(&name))?;
        } else {
            write(&name, b"")?;
        }
    }
    mount(none, staging, none, MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV, none)?;
    let open = |name: &str| -> Result<OwnedFd, Error> {
        let fd = nix::fcntl::open(&dir.join(name), nix::fcntl::OFlag::O_PATH | nix::fcntl::OFlag::O_CLOEXEC, nix::sys::stat::Mode::empty())?;
        Ok(unsafe_own(fd))
    };
    let data = data.into_iter().map(|i| Ok((i, open(&format!("data{i}"))?))).collect::<Result<Vec<_>, Error>>()?;
    // Where the executor makes the whole view and stages under /dev: what
    // bwrap binds into its /dev by descriptor (the jail's gate and verify's
    // probe: the launcher's executable) bound here first, before any of the
    // view's mounts can cover its own path (a launcher under /tmp). bwrap's
    // bind by descriptor finds its source again by path (and checks it is
    // the same file), so that path must still be reachable when bwrap sets up.
    let dev_binds = dev_binds
        .into_iter()
        .map(|(i, src)| {
            let name = format!("bind{i}");
            let src = crate::sandbox::exec::open_beneath(src)?;
            let target = open(&name)?;
            mountfd::bind(src.as_raw_fd(), target.as_raw_fd())
                .map_err(|e| Error::other(format!("cannot stage {} for bwrap: {e}", plan.data.get(i).map(|d| d.purpose.name()).unwrap_or("a file"))))?;
            Ok((i, open(&name)?))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(Staged { empty: open("empty")?, data, dev_binds })
}

/// What a premount's destination must be: a directory or a file, and
/// whether it is made when missing. `at`: where it lies on the host.
fn wanted(m: &Mount, plan: &Plan, at: &Path) -> (bool, bool) {
    match m {
        Mount::TmpfsRo { .. } => (true, true),
        Mount::Mask { .. } => (false, true),
        // Made only where the mount point is not its own source: a
        // command's install dir bound back into a private tool dir's copy,
        // which has no such entry of its own yet. A pin's source is its
        // mount point; gone, it is a change that refuses the launch.
        Mount::BindFd { data, .. } => match plan.data.get(*data).and_then(|d| d.open.as_ref()) {
            Some(o) => (o.dir, o.root.join(&o.rel) != at),
            None => (false, false),
        },
        _ => (true, false),
    }
}

/// Step 3: a missing destination inside a place sessions write made on
/// the host (a directory for an empty directory, a file for a mask), in
/// its parent as it is now, without following anything; something else
/// appearing there meanwhile is found by the walk before the mount.
fn create_mount_points(plan: &Plan, premounts: &[Premount]) -> Result<(), Error> {
    for p in premounts {
        let (Some(m), Some((root, rel))) = (plan.mount(p.mount), &p.host) else { continue };
        let (dir, create) = wanted(m, plan, &root.join(rel));
        if create {
            make_mount_point(root, rel, dir)?;
        }
    }
    Ok(())
}

/// A missing `rel` under `root` made (with its missing parents), a
/// directory or an empty file, without following anything.
fn make_mount_point(root: &Path, rel: &Path, dir: bool) -> Result<(), Error> {
    let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else { return Ok(()) };
    // Missing parents too (a hooks path's directories), as bwrap did.
    crate::nofollow::ensure_dir(root, parent, 0o755)?;
    let root_fd = crate::nofollow::open_root(root)?;
    let Ok((parent_fd, crate::nofollow::Entry::Dir)) = crate::nofollow::walk(&root_fd, parent) else { return Ok(()) };
    let parent_fd = reopen(&parent_fd)?;
    let made = if dir {
        nix::sys::stat::mkdirat(Some(parent_fd.as_raw_fd()), name, nix::sys::stat::Mode::from_bits_truncate(0o755)).map(|()| None)
    } else {
        let flags =
            nix::fcntl::OFlag::O_CREAT | nix::fcntl::OFlag::O_EXCL | nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_WRONLY | nix::fcntl::OFlag::O_CLOEXEC;
        nix::fcntl::openat(Some(parent_fd.as_raw_fd()), name, flags, nix::sys::stat::Mode::from_bits_truncate(0o644)).map(Some)
    };
    match made {
        Ok(Some(fd)) => drop(unsafe_own(fd)),
        Ok(None) | Err(nix::errno::Errno::EEXIST) => {}
        Err(e) => return Err(Error::other(format!("cannot make the mount point {}: {e}", root.join(rel).display()))),
    }
    Ok(())
}

/// The executor's own mounts' sources (`MountApi::Full`), taken before
/// anything is mounted (as bwrap takes them from the old root, untouched
/// by the session's mounts): a detached copy of each tree with bwrap's
/// flags set, in premount order; `None` where an optional one is missing
/// or the mount has no source. A source inside a place sessions write is
/// walked to without following anything.
fn open_sources(plan: &Plan, premounts: &[Premount]) -> Result<Vec<Option<OwnedFd>>, Error> {
    let mut out = Vec::with_capacity(premounts.len());
    for p in premounts {
        let (fd, read_only) = match plan.mount(p.mount) {
            Some(m @ (Mount::RoBind { src, dest, optional } | Mount::Bind { src, dest, optional })) => {
                let opened = match &p.host {
                    Some((root, rel)) if src == dest => open_target(root, rel, true).or_else(|_| open_target(root, rel, false)).map(Some),
                    _ => open_path(src),
                };
                match opened {
                    Ok(Some(fd)) => (fd, matches!(m, Mount::RoBind { .. })),
                    Ok(None) if *optional => {
                        out.push(None);
                        continue;
                    }
                    Ok(None) => return Err(Error::other(format!("{} does not exist; it is bound into every session", src.display()))),
                    Err(e) => return Err(e),
                }
            }
            Some(Mount::BindFd { data, writable, .. }) => match plan.data.get(*data).and_then(|d| d.open.as_ref()) {
                Some(o) => (open_target(&o.root, &o.rel, o.dir)?, !*writable),
                None => return Err(Error::other("a bind without a source")),
            },
            _ => {
                out.push(None);
                continue;
            }
        };
        let tree = mountfd::clone_tree(fd.as_raw_fd(), true)?;
        mountfd::bind_flags(tree.as_raw_fd(), read_only)?;
        out.push(Some(tree));
    }
    Ok(out)
}

/// `path` opened as bwrap resolves a bind's source (following links: only
/// trusted places are bound by path); `None` when it does not exist.
fn open_path(path: &Path) -> Result<Option<OwnedFd>, Error> {
    match nix::fcntl::open(path, nix::fcntl::OFlag::O_PATH | nix::fcntl::OFlag::O_CLOEXEC, nix::sys::stat::Mode::empty()) {
        Ok(fd) => Ok(Some(unsafe_own(fd))),
        Err(nix::errno::Errno::ENOENT) => Ok(None),
        Err(e) => Err(Error::other(format!("cannot open {}: {e}", path.display()))),
    }
}

/// The host's tree read-only under everything the executor mounts next
/// (`mountfd::host_read_only`), in this process's mount namespace (which
/// must be its own). Also the jail tests' harness's, for its own bwrap.
pub fn host_read_only() -> Result<(), Error> {
    let open = |p: &str| open_path(Path::new(p));
    let root = open("/")?.ok_or_else(|| Error::other("/ cannot be opened"))?;
    let (dev, proc_) = (open("/dev")?, open("/proc")?);
    mountfd::host_read_only(root.as_raw_fd(), dev.as_ref().map(|d| d.as_raw_fd()), proc_.as_ref().map(|p| p.as_raw_fd()))
        .map_err(|e| Error::other(format!("cannot make the host's tree read-only for the session: {e}")))
}

/// Whom what the executor creates for the session must belong to on host
/// files, where that is not the launcher itself: a root launcher's
/// unprivileged uid and gid (in a user namespace the launcher's own ids
/// already are the session's).
fn session_owner(stage: Stage, view: &HostView) -> Option<(u32, u32)> {
    match (stage, view) {
        (Stage::Root { .. }, HostView::Unprivileged { uid, gid, .. }) => Some((*uid, *gid)),
        _ => None,
    }
}

/// The options of the executor's writable tmpfs mounts: bwrap's mode, and
/// the session's owner.
fn tmpfs_options(owner: Option<(u32, u32)>) -> String {
    match owner {
        Some((uid, gid)) => format!("mode=0755,uid={uid},gid={gid}"),
        None => "mode=0755".into(),
    }
}

/// Gives `owner` each component of `rel` under `root` (in a tmpfs of the
/// executor's: mount points it just made there, so the session can create
/// beside them, as in directories bwrap would have made), not following
/// anything.
fn chown_components(root: &Path, rel: &Path, owner: (u32, u32)) -> Result<(), Error> {
    let mut done = PathBuf::new();
    for part in rel.iter() {
        done.push(part);
        let flags = nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW;
        nix::unistd::fchownat(None, &root.join(&done), Some(owner.0.into()), Some(owner.1.into()), flags)?;
    }
    Ok(())
}

/// Whether what `fd` is open on is a directory.
fn is_dir(fd: &OwnedFd) -> bool {
    nix::sys::stat::fstat(fd.as_raw_fd()).is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR)
}

/// Step 6 for one of the executor's mounts (`MountApi::Full`), in plan
/// order: its destination walked to from the mount that covers it (made
/// first when it lies in a fresh tmpfs), then the mount onto the object
/// walked to.
fn make(plan: &Plan, p: &Premount, source: Option<&OwnedFd>, staged: &Staged, tmpfs: &str, owner: Option<(u32, u32)>) -> Result<(), Error> {
    let Some(m) = plan.mount(p.mount) else { return Ok(()) };
    let what = || m.dest().display().to_string();
    let dir = match m {
        Mount::Tmpfs { .. } | Mount::TmpfsRo { .. } => true,
        Mount::Mask { .. } | Mount::Data { .. } => false,
        // An optional bind whose source is missing: skipped, as bwrap's
        // `-try` binds are.
        Mount::RoBind { .. } | Mount::Bind { .. } | Mount::BindFd { .. } => match source {
            Some(s) => is_dir(s),
            None => return Ok(()),
        },
        _ => return Ok(()),
    };
    if p.fresh {
        make_mount_point(&p.root, &p.rel, dir)?;
        if let Some(owner) = owner {
            chown_components(&p.root, &p.rel, owner)?;
        }
    }
    // In a place sessions write, only the kind the plan saw; elsewhere (a
    // system file masked) any file that is not a directory.
    let target = match (open_target(&p.root, &p.rel, dir), &p.host) {
        (Ok(t), _) => t,
        (Err(_), None) if !dir => open_non_dir(&p.root, &p.rel)?,
        (Err(e), _) => return Err(e),
    };
    let t = target.as_raw_fd();
    let r = match (m, source) {
        (Mount::Tmpfs { .. }, _) => mountfd::tmpfs_onto(t, tmpfs),
        (Mount::TmpfsRo { .. }, _) => mountfd::empty_dir_onto(t),
        (Mount::Mask { .. }, _) => mountfd::bind(staged.empty.as_raw_fd(), t),
        (Mount::Data { data, .. }, _) => match staged.data.iter().find(|(i, _)| i == data) {
            Some((_, f)) => mountfd::bind(f.as_raw_fd(), t),
            None => Err(Error::other("its contents were not staged")),
        },
        (_, Some(tree)) => mountfd::attach(tree.as_raw_fd(), t),
        _ => Ok(()),
    };
    r.map_err(|e| Error::other(format!("cannot mount {} for the session: {e}", what())))
}

/// `rel` under `root`, walked without following anything, when it is
/// something other than a directory (a socket, a device, a FIFO).
fn open_non_dir(root: &Path, rel: &Path) -> Result<OwnedFd, Error> {
    let r = crate::nofollow::open_root(root)?;
    match crate::nofollow::walk(&r, rel) {
        Ok((fd, crate::nofollow::Entry::File | crate::nofollow::Entry::Special(_))) => Ok(fd),
        Ok((_, kind)) | Err(kind) => {
            Err(Error::other(format!("{} changed while the session was starting (it is now {})", root.join(rel).display(), kind.describe())))
        }
    }
}

fn unsafe_own(fd: RawFd) -> OwnedFd {
    // SAFETY: `fd` was just returned by openat and is owned only here.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// An `O_PATH` directory descriptor reopened so it can be created in.
fn reopen(fd: &OwnedFd) -> Result<OwnedFd, Error> {
    let flags = nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY | nix::fcntl::OFlag::O_CLOEXEC;
    Ok(unsafe_own(nix::fcntl::openat(Some(fd.as_raw_fd()), ".", flags, nix::sys::stat::Mode::empty())?))
}

/// The object at `rel` under `root`, walked without following anything;
/// it must be a directory (`dir`) or not one.
fn open_target(root: &Path, rel: &Path, dir: bool) -> Result<OwnedFd, Error> {
    use crate::nofollow::Entry;
    let r = crate::nofollow::open_root(root)?;
    let changed = |kind: Entry| {
        Error::other(format!(
            "{} changed while the session was starting (it is now {}); look at it with `agent-sandbox review`, then start again",
            root.join(rel).display(),
            kind.describe()
        ))
    };
    match crate::nofollow::walk(&r, rel) {
        Ok((fd, Entry::Dir)) if dir => Ok(fd),
        Ok((fd, Entry::File)) if !dir => Ok(fd),
        Ok((_, kind)) | Err(kind) => Err(changed(kind)),
    }
}

/// Step 5 for one premount.
fn premount(plan: &Plan, p: &Premount, empty: &OwnedFd) -> Result<(), Error> {
    let Some(m) = plan.mount(p.mount) else { return Ok(()) };
    let (dir, _) = wanted(m, plan, &p.root.join(&p.rel));
    let target = open_target(&p.root, &p.rel, dir)?;
    let t = target.as_raw_fd();
    let what = || plan.mount(p.mount).map(|m| m.dest().display().to_string()).unwrap_or_default();
    let r = match m {
        Mount::TmpfsRo { .. } => mountfd::empty_dir_onto(t),
        Mount::Mask { .. } => mountfd::bind(empty.as_raw_fd(), t),
        // Bound onto itself: the object walked to is the source.
        Mount::Bind { .. } => mountfd::bind(t, t),
        Mount::RoBind { .. } => read_only_bind(t, t),
        Mount::BindFd { data, writable, .. } => {
            let source = match plan.data.get(*data).and_then(|d| d.open.as_ref()) {
                Some(o) if o.root == p.root && o.rel == p.rel => None,
                Some(o) => Some(open_target(&o.root, &o.rel, o.dir)?),
                None => return Err(Error::other(format!("{}: a bind without a source", what()))),
            };
            let s = source.as_ref().map_or(t, |s| s.as_raw_fd());
            if *writable {
                mountfd::bind(s, t)
            } else {
                read_only_bind(s, t)
            }
        }
        _ => Ok(()),
    };
    r.map_err(|e| Error::other(format!("cannot mount {} for the session: {e}", what())))
}

/// A read-only copy of the tree at `src` (submounts too) on `target`.
fn read_only_bind(src: RawFd, target: RawFd) -> Result<(), Error> {
    let tree = mountfd::clone_tree(src, true)?;
    mountfd::attach(tree.as_raw_fd(), target)?;
    mountfd::read_only(tree.as_raw_fd())
}

/// An empty read-only view over what is at `p` now (a directory gets an
/// empty tmpfs, anything else the empty file; a link or nothing is left
/// alone: nothing to hide). Reached by descriptor: the parent by its path
/// (outside every place sessions write), the entry itself not followed.
fn mask_entry(p: &Path, empty: &OwnedFd) -> Result<(), Error> {
    let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else { return Ok(()) };
    let Ok(dir) = crate::nofollow::open_root(parent) else { return Ok(()) };
    let flags = nix::fcntl::OFlag::O_PATH | nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_CLOEXEC;
    let Ok(fd) = nix::fcntl::openat(Some(dir.as_raw_fd()), name, flags, nix::sys::stat::Mode::empty()) else { return Ok(()) };
    let fd = unsafe_own(fd);
    let Ok(st) = nix::sys::stat::fstat(fd.as_raw_fd()) else { return Ok(()) };
    let r = match nix::sys::stat::SFlag::from_bits_truncate(st.st_mode & nix::sys::stat::SFlag::S_IFMT.bits()) {
        nix::sys::stat::SFlag::S_IFLNK => return Ok(()),
        nix::sys::stat::SFlag::S_IFDIR => mountfd::empty_dir_onto(fd.as_raw_fd()),
        _ => mountfd::bind(empty.as_raw_fd(), fd.as_raw_fd()),
    };
    match r {
        Ok(()) => Ok(()),
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => Ok(()),
        Err(e) => Err(Error::other(format!("cannot hide {} from the session: {e}", p.display()))),
    }
}

/// Forks the process that mounts the later masks (twice, so the launcher,
/// a subreaper, adopts and reaps it; the process that becomes bwrap waits
/// only for the first fork). It keeps no descriptor but the three it
/// needs: a copy of the holder's channel would hide the exec of bwrap from
/// the launcher until it ends.
fn follow_up(later: &Later<'_>, empty: &OwnedFd) -> Result<(), Error> {
    let step = "forking the process that hides what only root may read";
    let grandchild = || crate::jail::fork_child(step, || mask_later(later, empty)).map_or(1, |_| 0);
    let child = crate::jail::fork_child(step, grandchild).map_err(Error::other)?;
    nix::sys::wait::waitpid(child, None)?;
    Ok(())
}

/// The forked process's work: the scan's findings masked, the outcome
/// reported. The staging tmpfs stays (read-only, empty but for the empty
/// file; under the session's own /tmp): detaching it would propagate an
/// unmount into bwrap's copy while bwrap may be remounting that copy
/// read-only, which bwrap takes as fatal.
fn mask_later(later: &Later<'_>, empty: &OwnedFd) -> i32 {
    crate::jail::close_fds_except(&[later.scan.fd(), later.done.as_raw_fd(), empty.as_raw_fd()]);
    let outcome = later.scan.findings().and_then(|found| found.iter().try_for_each(|(p, _)| mask_entry(p, empty)));
    let word = match outcome {
        Ok(()) => b"1".to_vec(),
        Err(e) => format!("0cannot hide what only root may read: {e}").into_bytes(),
    };
    i32::from(nix::unistd::write(later.done, &word).is_err())
}

/// Step 7 without the jail: the outer uid and gid (no supplementary group but the allowed
/// devices'), dumpable again (so the process may write its own id maps
/// and its namespaces can be joined), dying with the launcher still (a
/// change of credentials clears that).
fn become_unprivileged(uid: u32, gid: u32, groups: &[u32]) -> Result<(), Error> {
    let parent = nix::unistd::getppid();
    set_groups(groups)?;
    nix::unistd::setresgid(gid.into(), gid.into(), gid.into())?;
    nix::unistd::setresuid(uid.into(), uid.into(), uid.into())?;
    nix::sys::prctl::set_dumpable(true)?;
    crate::jail::die_with_parent(parent).map_err(|e| Error::other(format!("the launcher went away while the session started ({e})")))
}

/// The refusal when no user namespace can be made: its cause and fix as
/// the jail names them (a seccomp profile, a sysctl, an emulator).
fn no_userns(uid: u32, e: nix::errno::Errno) -> Error {
    let (cause, fix) = crate::jail::userns_diagnosis(&crate::jail::current_userns_facts(), uid, e as i32);
    Error::other(format!("the session's mounts need a user namespace, and user namespaces are not available: {cause}. Fix: {fix}"))
}

/// The outer uid and gid of a root launcher's unprivileged sessions: ids
/// no account of the system has (Debian reserves 65000-65533), below the
/// 65536 ids every container runtime maps, so they exist in user-namespaced
/// containers too. Every root launcher's sessions share them (each in its
/// own namespaces, as one user's sessions share that user's uid).
pub const OUTER_ID: u32 = 65533;

/// For a root launcher: whether its session can be unprivileged on host
/// files, and the idmapped trees that makes it so, ready to attach: one
/// per place the session writes (`places`: the home it binds state from,
/// the workspace, `allowWrite` paths), each exchanging its owner and
/// `OUTER_ID`. Anything missing (an account holding that id, a kernel or
/// file system without idmapped mounts, no right to make them: a container
/// without CAP_SYS_ADMIN) decides the scan instead, saying why.
/// `devices`: the allowed device nodes, whose groups the session keeps.
/// Single-threaded (it forks).
pub fn decide_root(places: &[PathBuf], devices: &[PathBuf]) -> (HostView, Prepared) {
    match unprivileged(places, devices) {
        Ok(r) => r,
        Err(why) => (HostView::Scan { why }, Prepared::default()),
    }
}

fn unprivileged(places: &[PathBuf], devices: &[PathBuf]) -> Result<(HostView, Prepared), String> {
    use std::os::unix::fs::MetadataExt;
    if let Ok(Some(u)) = nix::unistd::User::from_uid(OUTER_ID.into()) {
        return Err(format!("uid {OUTER_ID}, which root launchers' sessions run as, belongs to the account {}", u.name));
    }
    if let Ok(Some(g)) = nix::unistd::Group::from_gid(OUTER_ID.into()) {
        return Err(format!("gid {OUTER_ID}, which root launchers' sessions run as, belongs to the group {}", g.name));
    }
    // Outer places first: a place inside another is attached on top of it.
    let mut places: Vec<&PathBuf> = places.iter().collect();
    places.sort_by_key(|p| p.components().count());
    places.dedup();
    let mut userns: Vec<((u32, u32), OwnedFd)> = Vec::new();
    let mut prepared = Prepared::default();
    for place in places {
        let meta = std::fs::metadata(place).map_err(|e| format!("{}: {e}", place.display()))?;
        let owner = (meta.uid(), meta.gid());
        if !userns.iter().any(|(o, _)| *o == owner) {
            let ns = mountfd::userns_with_maps(&mountfd::swap_map(owner.0, OUTER_ID), &mountfd::swap_map(owner.1, OUTER_ID))
                .map_err(|e| format!("an id mapping for idmapped mounts cannot be made ({e})"))?;
            userns.push((owner, ns));
        }
        let ns = userns.iter().find(|(o, _)| *o == owner).map(|(_, ns)| ns.as_raw_fd()).unwrap_or(-1);
        let fd = crate::nofollow::open_root(place).map_err(|e| format!("{}: {e}", place.display()))?;
        let tree = mountfd::clone_tree(fd.as_raw_fd(), true).map_err(|e| format!("the mount API is not available for {} ({e})", place.display()))?;
        mountfd::idmap(tree.as_raw_fd(), ns).map_err(|e| format!("{} cannot be mounted idmapped ({e}{})", place.display(), idmap_hint(&e)))?;
        prepared.idmapped.push((place.clone(), tree));
    }
    let mut groups: Vec<u32> = devices.iter().filter_map(|d| std::fs::metadata(d).ok()).map(|m| m.gid()).filter(|g| *g != 0).collect();
    groups.sort_unstable();
    groups.dedup();
    let idmapped = prepared.idmapped.iter().map(|(p, _)| p.clone()).collect();
    Ok((HostView::Unprivileged { uid: OUTER_ID, gid: OUTER_ID, groups, idmapped }, prepared))
}

/// What an idmapping failure most likely means.
fn idmap_hint(e: &Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::EPERM) => ": making them needs CAP_SYS_ADMIN over the file system, which a container without it lacks",
        Some(libc::EINVAL) => ": its file system (or one mounted inside it) does not support idmapped mounts",
        Some(libc::ENOSYS) => ": this kernel is older than Linux 5.12",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The staging tmpfs goes where no path of the launch lies: /tmp
    /// unless a workspace or the launcher is there, then the next.
    #[test]
    fn the_staging_place_avoids_every_path_the_launch_uses() {
        let all = |_: &Path| true;
        let place = |used: &[&str]| staging_place(STAGING_CANDIDATES, &used.iter().map(Path::new).collect::<Vec<_>>(), all).map_err(|e| e.to_string());
        assert_eq!(place(&["/", "/workspaces/app", "/root"]), Ok("/tmp"));
        assert_eq!(place(&["/tmp/fresh/target/debug/agent-sandbox"]), Ok("/dev/shm"));
        assert_eq!(place(&["/tmp/ws", "/dev/shm/x"]), Ok("/run"));
        // A prefix of the name is not inside it.
        assert_eq!(place(&["/tmpdata/ws"]), Ok("/tmp"));
        let err = place(&["/tmp/a", "/run/b", "/dev/shm/c"]).unwrap_err();
        assert!(err.contains("/tmp, /dev/shm, /run") && err.contains("move the workspace"), "{err}");
        // A candidate that is not a directory here is skipped.
        assert_eq!(staging_place(STAGING_CANDIDATES, &[], |p: &Path| p != Path::new("/tmp")).unwrap(), "/dev/shm");
    }
}
