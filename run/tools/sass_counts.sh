#!/usr/bin/env bash
# run/tools/sass_counts.sh BUILD_DIR [SOURCE.cu ...] - the SASS instruction count of every
# kernel of the given CUDA sources (default: the z-marching kernels, iso_cuda.cu and
# tti_cuda.cu), as the build compiles them: each source is compiled again with the build's
# own nvcc command (ninja -t commands) to a cubin for the first real architecture, and
# each kernel's .text section counted in 16-byte instructions, the NOP padding and the
# closing branch-to-self left out. Static counts, no GPU and no cuobjdump needed: compare a
# kernel before and after a change, built with the same nvcc and options. Prints
# "count kernel" lines (mangled names, the anonymous namespace's per-file tag written
# "anon"), sorted by name.
set -euo pipefail
build="${1:?usage: run/tools/sass_counts.sh BUILD_DIR [SOURCE.cu ...]}"
shift
sources=("$@")
[ ${#sources[@]} -gt 0 ] || sources=(iso_cuda.cu tti_cuda.cu)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for source in "${sources[@]}"; do
  command="$(ninja -C "$build" -t commands | grep -E -- "-c [^ ]*/$source -o " | head -1)"
  [ -n "$command" ] || { echo "sass_counts: no compile command for $source in $build" >&2; exit 1; }
  cubin="$work/$(basename "$source" .cu).cubin"
  # the same command, one real architecture, a cubin instead of an object
  command="$(sed -E -e 's/ -MD -MT [^ ]+ -MF [^ ]+//' \
    -e 's/--generate-code=arch=compute_([0-9]+a?),code=\[[^]]*\]/-arch=sm_\1/' \
    -e 's/ -c ([^ ]+) -o [^ ]+$/ -cubin \1 -o CUBIN/' <<< "$command")"
  command="$(sed 's/ -arch=sm_[0-9a]*\( -arch=sm_[0-9a]*\)*/ &/' <<< "$command" | awk '{
    seen = 0; out = ""
    for (i = 1; i <= NF; ++i) { if ($i ~ /^-arch=sm_/) { if (seen++) continue } out = out (out == "" ? "" : " ") $i }
    print out }')"
  (cd "$build" && eval "${command/CUBIN/$cubin}")
  python3 - "$cubin" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
def section(i):
    name, kind, flags, addr, offset, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
    return name, offset, size
_, stroff, _ = section(shstrndx)
def name_at(o):
    return data[stroff + o:data.index(b"\0", stroff + o)].decode()
for i in range(shnum):
    name, offset, size = section(i)
    name = name_at(name)
    if not name.startswith(".text."):
        continue
    words = [struct.unpack_from("<Q", data, offset + 16 * k)[0] for k in range(size // 16)]
    opcode = lambda w: w & 0xFFF
    while words and opcode(words[-1]) == 0x918:          # NOP padding
        words.pop()
    if words and opcode(words[-1]) == 0x947:             # BRA to itself after EXIT
        words.pop()
    print(len(words), name[len(".text."):])
PY
done | sed -E 's/_GLOBAL__N__[0-9a-f]+_[0-9]+_[A-Za-z0-9_]+_cu_[0-9a-f]+/anon/' | sort -k2
