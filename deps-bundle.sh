#!/usr/bin/env bash
# deps-bundle.sh - an offline bundle of tessera's build dependencies, for
# hosts without a package registry (HPC nodes, GPU servers).
#
#   deps-bundle.sh download DIR
#       On a connected Debian 12 (bookworm) machine: fetches the Debian
#       packages tessera builds against (netCDF-C with HDF5 and what they
#       pull in, GSL, SQLite, jansson, zlib) into DIR with apt-get download
#       (no root needed; run apt-get update first if it cannot find them).
#       Copy DIR to the target machine.
#
#   deps-bundle.sh unpack DIR PREFIX
#       On the target: extracts every .deb of DIR into PREFIX (dpkg -x, no
#       root, nothing installed system-wide), points the pkg-config files and
#       absolute symbolic links into PREFIX, and prints the environment that
#       makes CMake, pkg-config, the compiler and the loader use PREFIX:
#           eval "$(./deps-bundle.sh unpack .bundle /tmp/tessera-deps)"
#           cmake -S . -B build && cmake --build build
#       CMake finds everything through CMAKE_PREFIX_PATH and PKG_CONFIG_PATH;
#       hand-written compile lines add $TESSERA_DEPS_CFLAGS (include paths,
#       include/hdf5/serial among them) and $TESSERA_DEPS_LDFLAGS. Only the
#       libraries the host lacks go on LD_LIBRARY_PATH (through
#       PREFIX/runtime-libs), so the host's own programs keep their newer
#       system libraries; the bundle's programs (ncdump, ncgen) go last on PATH.
#
# Progress goes to stderr; stdout carries only the environment.
set -euo pipefail

PACKAGES=(
    # netCDF-C and HDF5
    libnetcdf19 libnetcdf-dev netcdf-bin libhdf5-103-1 libhdf5-hl-100 libsz2 libaec0
    # what libnetcdf and libhdf5 link against
    libcurl3-gnutls libcurl4 libxml2 libicu72 libnghttp2-14 librtmp1 libssh2-1 libpsl5
    libldap-2.5-0 libsasl2-2 libbrotli1 libgnutls30 libnettle8 libhogweed6 libidn2-0
    libunistring2 libtasn1-6 libp11-kit0 libgmp10 libffi8 libgssapi-krb5-2 libkrb5-3
    libk5crypto3 libkrb5support0 libkeyutils1 libcom-err2 libssl3 libsasl2-modules-db
    libdb5.3 liblzma5 libzstd1
    # GSL, SQLite, jansson, zlib
    libgsl27 libgslcblas0 libgsl-dev libsqlite3-0 libsqlite3-dev
    libjansson4 libjansson-dev zlib1g zlib1g-dev
    # pkg-config itself, for hosts without it
    pkgconf pkgconf-bin libpkgconf3
)
ARCH_TRIPLET=x86_64-linux-gnu

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}

download() {
    local dir=$1
    if [ -r /etc/os-release ] && ! grep -q '^VERSION_CODENAME=bookworm' /etc/os-release &&
        [ -z "${DEPS_BUNDLE_ANY_RELEASE:-}" ]; then
        echo "deps-bundle: this is not Debian 12 (bookworm); the bundle's packages must come from" >&2
        echo "bookworm. Set DEPS_BUNDLE_ANY_RELEASE=1 to download from this release anyway." >&2
        exit 1
    fi
    mkdir -p "$dir"
    (cd "$dir" && apt-get download "${PACKAGES[@]}") >&2 || {
        echo "deps-bundle: apt-get download failed; run 'apt-get update' (as root) and try again" >&2
        exit 1
    }
    (cd "$dir" && for deb in *.deb; do
        dpkg-deb -f "$deb" Package Version | paste -sd' '
    done) > "$dir/MANIFEST"
    echo "deps-bundle: $(ls "$dir"/*.deb | wc -l) packages, $(du -sh "$dir" | cut -f1) in $dir" >&2
}

# Rewrites the prefix of every pkg-config file under PREFIX into PREFIX.
fix_pkgconfig() {
    local prefix=$1
    local pc
    find "$prefix" -name '*.pc' -type f | while read -r pc; do
        sed -i -e "s#=/usr\\b#=$prefix/usr#g" -e "s#-I/usr/#-I$prefix/usr/#g" \
            -e "s#-L/usr/#-L$prefix/usr/#g" "$pc"
    done
}

# Points absolute symbolic links (libz.so -> /lib/.../libz.so.1.2.13) into PREFIX.
fix_links() {
    local prefix=$1
    local link target
    find "$prefix" -type l | while read -r link; do
        target=$(readlink "$link")
        case $target in
        /*) [ -e "$prefix$target" ] && ln -sfn "$prefix$target" "$link" ;;
        esac
    done
}

# Links into PREFIX/runtime-libs, under its SONAME, each shared library of
# the bundle whose SONAME the host's loader does not know, so LD_LIBRARY_PATH
# adds only what is missing.
runtime_libs() {
    local prefix=$1 known libdir lib soname
    known=$(ldconfig -p 2>/dev/null | awk '{print $1}' | sort -u)
    rm -rf "$prefix/runtime-libs"
    mkdir -p "$prefix/runtime-libs"
    for libdir in "$prefix/usr/lib/$ARCH_TRIPLET" "$prefix/lib/$ARCH_TRIPLET" \
        "$prefix/usr/lib/$ARCH_TRIPLET/hdf5/serial"; do
        [ -d "$libdir" ] || continue
        for lib in "$libdir"/lib*.so.*; do
            [ -f "$lib" ] && [ ! -L "$lib" ] || continue
            soname=$(readelf -d "$lib" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
            [ -n "$soname" ] || continue
            if ! grep -qxF "$soname" <<<"$known"; then ln -sfn "$lib" "$prefix/runtime-libs/$soname"; fi
        done
    done
}

unpack() {
    local dir=$1 prefix=$2
    ls "$dir"/*.deb > /dev/null 2>&1 || { echo "deps-bundle: no .deb files in $dir" >&2; exit 1; }
    mkdir -p "$prefix"
    prefix=$(cd "$prefix" && pwd)
    for deb in "$dir"/*.deb; do dpkg -x "$deb" "$prefix"; done
    fix_pkgconfig "$prefix"
    # netcdf.pc names HDF5's header directory, which netcdf.h does not need and
    # the bundle does not ship; CMake rejects include paths that do not exist.
    mkdir -p "$prefix/usr/include/hdf5/serial"
    fix_links "$prefix"
    runtime_libs "$prefix"
    echo "deps-bundle: unpacked $(ls "$dir"/*.deb | wc -l) packages into $prefix;" \
        "$(ls "$prefix/runtime-libs" | wc -l) libraries the host lacks go on LD_LIBRARY_PATH" >&2
    local lib="$prefix/usr/lib/$ARCH_TRIPLET" inc="$prefix/usr/include"
    cat <<EOF
export TESSERA_DEPS_PREFIX="$prefix"
export CMAKE_PREFIX_PATH="$prefix/usr\${CMAKE_PREFIX_PATH:+:\$CMAKE_PREFIX_PATH}"
export PKG_CONFIG_PATH="$lib/pkgconfig:$prefix/usr/share/pkgconfig\${PKG_CONFIG_PATH:+:\$PKG_CONFIG_PATH}"
export TESSERA_DEPS_CFLAGS="-I$inc -I$inc/hdf5/serial"
export TESSERA_DEPS_LDFLAGS="-L$lib -L$prefix/lib/$ARCH_TRIPLET -L$lib/hdf5/serial"
export LD_LIBRARY_PATH="$prefix/runtime-libs\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export PATH="\$PATH:$prefix/usr/bin"
EOF
}

case ${1:-} in
download) [ $# -eq 2 ] || usage; download "$2" ;;
unpack) [ $# -eq 3 ] || usage; unpack "$2" "$3" ;;
*) usage ;;
esac
