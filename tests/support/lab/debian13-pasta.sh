#!/bin/sh
# Debian 13's pasta (passt 2025-05) for the jail's lab on this Debian 12
# machine: its package and Debian 13's C library are fetched once with apt
# from Debian's archive (a private source list; nothing of the system's apt
# state changes) into CACHE, unpacked, and run by that C library's own
# loader through a wrapper `pasta` in DIR (root-owned, for the jail's
# trusted-pasta check). The AVX2 build is used where the CPU has AVX2, and
# the loader runs under a name ending in .avx2: pasta re-execs its own
# executable's .avx2 twin otherwise, which here would be the loader's.
# usage: debian13-pasta.sh CACHE DIR
set -eu
cache=$1
dir=$2
root=$cache/root
if [ ! -x "$root/usr/bin/pasta" ] || [ ! -e "$root/usr/lib64/ld-linux-x86-64.so.2" ]; then
    mkdir -p "$cache/lists/partial" "$cache/debs"
    cat > "$cache/trixie.sources" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    opts="-o Dir::Etc::SourceList=$cache/trixie.sources -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$cache/lists -o APT::Sandbox::User=root"
    apt-get $opts -qq update
    (cd "$cache/debs" && apt-get $opts -qq download passt libc6)
    rm -rf "$root"
    for d in "$cache"/debs/*.deb; do
        dpkg-deb -x "$d" "$root"
    done
fi
bin=pasta
grep -qw avx2 /proc/cpuinfo && [ -x "$root/usr/bin/pasta.avx2" ] && bin=pasta.avx2
cp "$root/usr/lib64/ld-linux-x86-64.so.2" "$root/loader.avx2"
mkdir -p "$dir"
chmod 755 "$dir"
cat > "$dir/pasta" <<WRAP
#!/bin/sh
exec $root/loader.avx2 --library-path $root/usr/lib/x86_64-linux-gnu --argv0 $bin $root/usr/bin/$bin "\$@"
WRAP
chmod 755 "$dir/pasta"
