#!/usr/bin/env bash
# run/deps.sh - the libraries rtm3d needs beyond a CUDA image: inih and cmocka.
#
#   run/deps.sh install   apt-get install every build dependency (Debian/Ubuntu, as root)
#   run/deps.sh fetch     download the .deb files of inih and cmocka into .deps/debs
#                         (on a connected machine; .deps/ is git-ignored and carried along)
#   source run/deps.sh env
#                         on an offline machine: unpack .deps/debs into .deps/prefix and
#                         export PKG_CONFIG_PATH, PKG_CONFIG_SYSROOT_DIR, LD_LIBRARY_PATH
set -euo pipefail 2>/dev/null || true

rtm_deps_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rtm_deps_dir="$rtm_deps_root/.deps"
rtm_offline_debs="libinih1 libinih-dev libcmocka0 libcmocka-dev"
rtm_apt_packages="build-essential cmake ninja-build pkg-config git libhdf5-dev libinih-dev \
libcmocka-dev libfftw3-dev libpng-dev libopenmpi-dev openmpi-bin"
# optional: SEG-Y export and import (segyio) and its Python reader for the tests, and the
# figures of rtm3d plot (PLplot with its cairo drivers); a distribution without them builds
# rtm3d without SEG-Y and with plain PNG pictures
rtm_apt_optional="libsegyio-dev python3-segyio libplplot-dev plplot-driver-cairo"
# optional: a parallel HDF5 beside the serial one, which run/test.sh builds against a second
# time (-DHDF5_PREFER_PARALLEL=ON: the ranks write their slabs collectively)
rtm_apt_parallel_hdf5="libhdf5-openmpi-dev"

rtm_deps_install() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $rtm_apt_packages
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $rtm_apt_optional ||
    echo "run/deps.sh: $rtm_apt_optional not installed: rtm3d builds without SEG-Y" >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $rtm_apt_parallel_hdf5 ||
    echo "run/deps.sh: $rtm_apt_parallel_hdf5 not installed: no parallel HDF5 build in run/test.sh" >&2
}

rtm_deps_fetch() {
  mkdir -p "$rtm_deps_dir/debs"
  (cd "$rtm_deps_dir/debs" && apt-get download $rtm_offline_debs)
  ls -l "$rtm_deps_dir/debs"
}

rtm_deps_env() {
  local prefix="$rtm_deps_dir/prefix"
  if [ ! -d "$prefix/usr" ]; then
    local deb
    for deb in "$rtm_deps_dir"/debs/*.deb; do
      [ -e "$deb" ] || { echo "run/deps.sh: no .deb files in $rtm_deps_dir/debs (run 'run/deps.sh fetch' on a connected machine)" >&2; return 1; }
      dpkg -x "$deb" "$prefix"
    done
  fi
  export PKG_CONFIG_PATH="$prefix/usr/lib/x86_64-linux-gnu/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export PKG_CONFIG_SYSROOT_DIR="$prefix"
  export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

case "${1:-}" in
  install) rtm_deps_install ;;
  fetch) rtm_deps_fetch ;;
  env) rtm_deps_env ;;
  *) echo "usage: run/deps.sh install | fetch | env (source it for env)" >&2; return 2 2>/dev/null || exit 2 ;;
esac
