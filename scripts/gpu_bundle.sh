#!/usr/bin/env bash
# Packs, on this (Debian 12) machine, everything scripts/gpu_checks.sh needs on
# a GPU machine that has only PyTorch, CUDA, CMake, ninja and a C++ compiler,
# and no network: the headers and libraries that the gpu preset's configure
# step finds (cmake/CadclipDeps.cmake without OCCT, the Gloo headers, pkg-config
# itself), GoogleTest's sources, and the inputs of the training-speed check (a
# prepared synthetic set; the MiniLM tower's files without its weights, which
# gpu_checks.sh fills with random numbers of the same shapes).
#
# The result is one archive of a prefix (include/, lib/, lib/pkgconfig/,
# share/cmake/, bin/, src/, train/) under build/, so git ignores it; a run on
# the device machine carries it (carry: ["build/gpu-bundle.tar.xz"]) and
# gpu_checks.sh unpacks it. With the working tree it must stay under 64 MiB:
# hence xz, and ICU's data library, 31 MB here, rebuilt with only the root
# items (0.8 MB; cadclip's tokenizers use character properties, case mapping
# and NFD, which ICU keeps in libicuuc itself).
#   scripts/gpu_bundle.sh [archive, default build/gpu-bundle.tar.xz]
# CADCLIP_BIN names a cadclip built with OCCT (default build/release/apps/cadclip)
# for the synthetic set; CADCLIP_TEXT_MODEL the MiniLM folder.
set -euo pipefail
cd "$(dirname "$0")/.."
archive=${1:-build/gpu-bundle.tar.xz}
cadclip=${CADCLIP_BIN:-build/release/apps/cadclip}
text_model=${CADCLIP_TEXT_MODEL:-/opt/cadclip/models/all-MiniLM-L6-v2}
parts=256  # all in the training split: one full batch of 256 an epoch
lib=/usr/lib/x86_64-linux-gnu
[ -x "$cadclip" ] || { echo "$0: $cadclip is not built (make build PRESET=release, or set CADCLIP_BIN)" >&2; exit 1; }
for tool in icupkg genccode gcc patchelf; do
  command -v "$tool" >/dev/null || { echo "$0: needs $tool (scripts/setup.sh installs it)" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$work/gpu-bundle
mkdir -p "$out"/{include/openssl,lib/pkgconfig,bin,share/cmake,src,train}

echo "== headers"
# Header-only libraries, and the headers of the compiled ones below. Gloo:
# LibTorch's c10d headers include it, and the wheel does not ship it.
cp -r /usr/include/{nlohmann,CLI,gloo,unicode,faiss,brotli} "$out/include/"
cp /usr/include/{httplib.h,sqlite3.h,sqlite3ext.h,sentencepiece_processor.h} \
   /usr/include/{sentencepiece_trainer.h,zlib.h,zconf.h} "$out/include/"
# OpenSSL: httplib.h includes it (Debian builds cpp-httplib with TLS); two of
# its headers live in the multiarch folder.
cp /usr/include/openssl/* /usr/include/x86_64-linux-gnu/openssl/* "$out/include/openssl/"
cp -r /usr/share/cmake/nlohmann_json "$out/share/cmake/"

echo "== libraries"
# Each with its symbolic links (cp -P). openblas-pthread's library also serves
# as BLAS and LAPACK (FAISS needs both); it needs libgfortran.
for name in 'libcpp-httplib.so*' 'libsqlite3.so*' 'libsentencepiece.so*' \
            'libsentencepiece_train.so*' 'libicuuc.so*' libfaiss.a 'libbrotli*.so*' \
            libgfortran.so.5 'libgfortran.so.5.*' libquadmath.so.0 'libquadmath.so.0.*' \
            libssl.so.3 libcrypto.so.3 'libz.so.1*' libpkgconf.so.3 'libpkgconf.so.3.*'; do
  # shellcheck disable=SC2086  # the name is a glob
  for file in $lib/$name; do cp -P "$file" "$out/lib/"; done
done
cp "$lib"/openblas-pthread/libopenblas.so.0 "$out/lib/"
ln -s libopenblas.so.0 "$out/lib/libopenblas.so"

# ICU's data: only the items at the root of the package, no locales.
data=$(readlink -f "$lib/libicudata.so")
version=$(basename "$data" | sed -E 's/libicudata\.so\.([0-9]+).*/\1/')
python3 - "$data" "$work/icudt${version}l.dat" "icudt${version}_dat" <<'EOF'
import subprocess, sys
# The data is one symbol in .rodata: cut it out by its address and size.
source, target, symbol = sys.argv[1:]
symbols = subprocess.run(["nm", "-D", "-S", source], capture_output=True, text=True, check=True)
address, size = next(line.split()[:2] for line in symbols.stdout.splitlines() if line.endswith(symbol))
sections = subprocess.run(["readelf", "-S", "-W", source], capture_output=True, text=True, check=True)
for line in sections.stdout.splitlines():
    fields = line.replace("[ ", "[").split()
    if len(fields) > 4 and fields[1] == ".rodata":
        section_address, section_offset = int(fields[3], 16), int(fields[4], 16)
offset = int(address, 16) - section_address + section_offset
with open(source, "rb") as f:
    f.seek(offset)
    open(target, "wb").write(f.read(int(size, 16)))
EOF
(cd "$work" && icupkg -l "icudt${version}l.dat" > all.txt &&
 grep -v / all.txt | grep -vE '\.(res|cnv|spp|cfu)$' > keep.txt &&
 printf '%s\n' root.res res_index.res pool.res >> keep.txt &&
 { grep -vxFf keep.txt all.txt || true; } > remove.txt &&
 icupkg -r remove.txt "icudt${version}l.dat" &&
 genccode -e "icudt${version}" -a gcc -d . "icudt${version}l.dat" >/dev/null &&
 gcc -shared -Wl,-soname,"libicudata.so.${version}" -o "libicudata.so.${version}" \
     "icudt${version}l_dat.S")
cp "$work/libicudata.so.${version}" "$out/lib/"
ln -s "libicudata.so.${version}" "$out/lib/libicudata.so"

# Each library finds the ones it needs beside it (the executables' run path
# covers only their own direct needs: libicuuc's libicudata, libopenblas's
# libgfortran, libcpp-httplib's OpenSSL and brotli).
find "$out/lib" -maxdepth 1 -type f -name '*.so*' -exec patchelf --set-rpath '$ORIGIN' {} \;

echo "== pkg-config"
# The .pc files the configure step reads, with their prefix made relative.
for pc in cpp-httplib sentencepiece icu-uc openssl libssl libcrypto zlib \
          libbrotlicommon libbrotlidec libbrotlienc; do
  sed -E -e 's|^prefix *= */usr$|prefix=${pcfiledir}/../..|' \
         -e 's|^exec_prefix *= */usr$|exec_prefix=${prefix}|' \
         -e 's|/lib/x86_64-linux-gnu|/lib|g' "$lib/pkgconfig/$pc.pc" > "$out/lib/pkgconfig/$pc.pc"
done
cp /usr/bin/pkgconf "$out/bin/"
patchelf --set-rpath '$ORIGIN/../lib' "$out/bin/pkgconf"
cat > "$out/bin/pkg-config" <<'EOF'
#!/bin/sh
# pkgconf, reading only this bundle's .pc files.
here=$(dirname "$(readlink -f "$0")")
PKG_CONFIG_LIBDIR="$here/../lib/pkgconfig" exec "$here/pkgconf" "$@"
EOF
chmod +x "$out/bin/pkg-config"

echo "== GoogleTest sources"
cp -r /usr/src/googletest "$out/src/"

echo "== training-speed inputs ($parts synthetic parts)"
"$cadclip" --log-level warn synth --count "$parts" --seed 1 --out "$work/synth"
python3 - "$work/synth/splits.json" <<'EOF'
import json, sys
splits = json.load(open(sys.argv[1]))
everything = sorted(id for ids in splits.values() for id in ids)
json.dump({"train": everything, "validation": [], "test": []}, open(sys.argv[1], "w"))
EOF
"$cadclip" --log-level warn prepare "$work/synth/parts" --captions "$work/synth/captions.jsonl" \
  --splits "$work/synth/splits.json" --out "$out/train/prepared"
rm -rf "$out/train/prepared/work"
mkdir -p "$out/train/text"
find "$text_model/" -maxdepth 1 -type f ! -name model.safetensors ! -name README.md \
  -exec cp {} "$out/train/text/" \;
[ -d "$text_model/1_Pooling" ] && cp -r "$text_model/1_Pooling" "$out/train/text/"
# The weights' names, dtypes and shapes: the safetensors header alone.
python3 - "$text_model/model.safetensors" "$out/train/text/weights.json" <<'EOF'
import json, struct, sys
with open(sys.argv[1], "rb") as f:
    header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
header.pop("__metadata__", None)
json.dump({name: {"dtype": t["dtype"], "shape": t["shape"]} for name, t in header.items()},
          open(sys.argv[2], "w"), indent=0)
EOF

{
  echo "Made by scripts/gpu_bundle.sh on $(date -u +%Y-%m-%d) from these Debian packages:"
  dpkg-query -W -f '${Package} ${Version}\n' nlohmann-json3-dev libcli11-dev libgloo-dev \
    libicu-dev libfaiss-dev libopenblas0-pthread libsqlite3-dev libsentencepiece-dev \
    libcpp-httplib-dev libssl-dev zlib1g-dev libbrotli-dev libgtest-dev pkgconf patchelf 2>/dev/null
} > "$out/MANIFEST"
mkdir -p "$(dirname "$archive")"
XZ_OPT="-6 -T2" tar -C "$work" -cJf "$archive" gpu-bundle
echo "gpu_bundle: $archive, $(du -sh "$out" | cut -f1) unpacked, $(du -h "$archive" | cut -f1) packed" \
     "(with the working tree, under 64 MiB)"
